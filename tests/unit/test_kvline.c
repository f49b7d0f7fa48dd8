/* common's "key = value" lines: comments and white space cut, blank lines
 * told apart from lines without '=', the value keeping inner spaces and
 * any further '='. */
#include "../../common/common.h"
#include "check.h"

#include <string.h>

static int split(const char *text, const char **key, const char **val)
{
    static char line[128];
    snprintf(line, sizeof line, "%s", text);
    char *k = NULL, *v = NULL;
    int rc = mb_kv_line(line, &k, &v);
    *key = k;
    *val = v;
    return rc;
}

int main(void)
{
    char s[32] = " \t a b \r\n";
    EXPECT(strcmp(mb_trim(s), "a b") == 0);
    char e[8] = " \t\n";
    EXPECT(strcmp(mb_trim(e), "") == 0);

    const char *k, *v;
    EXPECT(split("  ssd_bw = 3.2e9   # GB/s\n", &k, &v) == 1 && !strcmp(k, "ssd_bw") && !strcmp(v, "3.2e9"));
    EXPECT(split("name=machine A", &k, &v) == 1 && !strcmp(k, "name") && !strcmp(v, "machine A"));
    EXPECT(split("a = b = c", &k, &v) == 1 && !strcmp(k, "a") && !strcmp(v, "b = c"));
    EXPECT(split("key =", &k, &v) == 1 && !strcmp(k, "key") && !strcmp(v, ""));
    EXPECT(split(" = 1", &k, &v) == 1 && !strcmp(k, "") && !strcmp(v, "1"));
    EXPECT(split("", &k, &v) == 0);
    EXPECT(split("   \t\r\n", &k, &v) == 0);
    EXPECT(split("# only a comment = 1", &k, &v) == 0);
    EXPECT(split("  no equals sign  # x=1", &k, &v) == -1 && !strcmp(k, "no equals sign") && v == NULL);
    return TEST_EXIT();
}
