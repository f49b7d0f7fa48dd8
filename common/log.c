/* Messages prefixed by the program name; mb_die ends every rank. */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *progname = "movebench";

void mb_set_progname(const char *name) { progname = name; }
const char *mb_progname(void) { return progname; }

static void vreport(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", progname);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

void mb_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
}

void mb_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) {
        int size = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (size > 1)
            MPI_Abort(MPI_COMM_WORLD, status);
        MPI_Finalize();
    }
    exit(status);
}
