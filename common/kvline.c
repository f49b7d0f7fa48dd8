/* "key = value" lines (common.h): the split that gnn's hardware profiles
 * and zero's rates files share; each caller keeps its own keys and checks. */
#include "common.h"

#include <ctype.h>
#include <string.h>

char *mb_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

int mb_kv_line(char *line, char **key, char **val)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = 0;
    char *s = mb_trim(line);
    *key = s;
    *val = NULL;
    if (!*s)
        return 0;
    char *eq = strchr(s, '=');
    if (!eq)
        return -1;
    *eq = 0;
    *key = mb_trim(s);
    *val = mb_trim(eq + 1);
    return 1;
}
