/* common's CRC32C: the standard check value, the iSCSI test vectors
 * (RFC 3720 B.4), chaining equals one pass, and a flipped bit changes it. */
#include "../../common/common.h"
#include "check.h"

#include <string.h>

int main(void)
{
    EXPECT(mb_crc32c(0, "123456789", 9) == 0xE3069283u);
    unsigned char z[32] = {0}, ff[32], inc[32];
    memset(ff, 0xff, sizeof(ff));
    for (int i = 0; i < 32; i++)
        inc[i] = (unsigned char)i;
    EXPECT(mb_crc32c(0, z, 32) == 0x8A9136AAu);
    EXPECT(mb_crc32c(0, ff, 32) == 0x62A8AB43u);
    EXPECT(mb_crc32c(0, inc, 32) == 0x46DD794Eu);
    EXPECT(mb_crc32c(0, "", 0) == 0);

    unsigned char buf[4099];
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (unsigned char)mb_splitmix64(&s);
    uint32_t whole = mb_crc32c(0, buf, sizeof(buf));
    for (size_t cut = 0; cut <= sizeof(buf); cut += 577)
        EXPECT(mb_crc32c(mb_crc32c(0, buf, cut), buf + cut, sizeof(buf) - cut) == whole);
    buf[1234] ^= 0x10;
    EXPECT(mb_crc32c(0, buf, sizeof(buf)) != whole);
    return TEST_EXIT();
}
