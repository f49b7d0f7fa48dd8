/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the SSE4.2
 * instruction when the CPU has it (checked once), else a byte table. */
#include "common.h"

#include <pthread.h>
#include <string.h>

static uint32_t crc_table[256];
static int crc_hw = -1; /* -1 unknown, 0 table, 1 SSE4.2 */

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[i] = c;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
    crc_hw = 0;
#endif
}

static uint32_t crc_sw(uint32_t c, const unsigned char *p, size_t len)
{
    while (len--)
        c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw_run(uint32_t c, const unsigned char *p, size_t len)
{
    uint64_t c64 = c;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = __builtin_ia32_crc32di(c64, w);
        p += 8;
        len -= 8;
    }
    c = (uint32_t)c64;
    while (len--)
        c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#endif

uint32_t mb_crc32c(uint32_t crc, const void *buf, size_t len)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, crc_init);
    uint32_t c = ~crc;
#if defined(__x86_64__)
    if (crc_hw == 1)
        return ~crc_hw_run(c, buf, len);
#endif
    return ~crc_sw(c, buf, len);
}
