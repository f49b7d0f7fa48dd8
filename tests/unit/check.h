/* Tiny assertion helpers for the unit tests: each test is its own program
 * whose exit status is the verdict (0 pass, 1 fail, 77 skip). */
#ifndef MB_TEST_CHECK_H
#define MB_TEST_CHECK_H

#include <stdio.h>

static int test_failures;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);                  \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define EXPECT_NEAR(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(a_ - b_ <= (tol) && b_ - a_ <= (tol))) {                                             \
            fprintf(stderr, "%s:%d: %s = %.17g, expected %.17g\n", __FILE__, __LINE__, #a, a_, b_); \
            test_failures++;                                                                       \
        }                                                                                          \
    } while (0)

#define TEST_EXIT() (test_failures ? (fprintf(stderr, "%d failure(s)\n", test_failures), 1) : 0)

#endif
