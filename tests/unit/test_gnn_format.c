/* gnn/ dataset format checks: each damaged file is refused at open with
 * one message naming it (missing, truncated, extended, bad magic, other
 * version, corrupted header, labels, split, offsets, neighbours). */
#include "../../gnn/gnn.h"
#include "check.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];
static char meta[300], data0[300], data1[300];

static void copy_file(const char *from, const char *to)
{
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
    EXPECT(system(cmd) == 0);
}

/* Opens (verify_topology as given); returns 1 when refused with a
 * message containing file and want. */
static int refused(int verify, const char *file, const char *want)
{
    struct gnn_open_opts o = {.topo = GNN_MMAP, .feat = GNN_MMAP, .verify_topology = verify};
    char err[600] = "";
    struct gnn_dataset *ds = gnn_open(dir, &o, err, sizeof(err));
    if (ds) {
        gnn_close(ds);
        fprintf(stderr, "opened although %s should be refused\n", want);
        return 0;
    }
    int ok = strstr(err, file) != NULL && strstr(err, want) != NULL;
    if (!ok)
        fprintf(stderr, "message '%s' lacks '%s' / '%s'\n", err, file, want);
    return ok;
}

static int opens(int verify)
{
    struct gnn_open_opts o = {.topo = GNN_MMAP, .feat = GNN_MMAP, .verify_topology = verify};
    char err[600] = "";
    struct gnn_dataset *ds = gnn_open(dir, &o, err, sizeof(err));
    if (!ds)
        fprintf(stderr, "open: %s\n", err);
    gnn_close(ds);
    return ds != NULL;
}

static void poke(const char *path, off_t off, const void *bytes, size_t n)
{
    int fd = open(path, O_RDWR);
    EXPECT(fd >= 0 && pwrite(fd, bytes, n, off) == (ssize_t)n);
    close(fd);
}

/* damage a copy, check the refusal, restore */
#define DAMAGE(path, code, verify, want)                                                             \
    do {                                                                                             \
        copy_file(path, "/tmp/mb-gnn-format.bak");                                                  \
        code;                                                                                        \
        EXPECT(refused(verify, path, want));                                                         \
        copy_file("/tmp/mb-gnn-format.bak", path);                                                  \
        EXPECT(opens(1));                                                                            \
    } while (0)

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/mb-gnn-fmt.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(meta, sizeof(meta), "%s/graph.meta", dir);
    snprintf(data0, sizeof(data0), "%s/data.0", dir);
    snprintf(data1, sizeof(data1), "%s/data.1", dir);
    struct gnn_gen_params p;
    gnn_gen_defaults(&p);
    p.scale = 9;
    p.ndev = 2;
    p.stripe = 4096;
    p.quiet = 1;
    char err[512];
    if (gnn_generate(dir, &p, err, sizeof(err))) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    EXPECT(opens(1));
    struct gnn_header h;
    int fd = open(meta, O_RDONLY);
    EXPECT(fd >= 0 && pread(fd, &h, sizeof(h), 0) == sizeof(h));
    close(fd);

    uint32_t bad32 = 0xdeadbeef, v2 = GNN_FORMAT_VERSION + 1;
    uint64_t bad64 = 0x1234;
    DAMAGE(meta, EXPECT(truncate(meta, 100) == 0), 0, "truncated header");
    DAMAGE(meta, EXPECT(truncate(meta, (off_t)h.meta_bytes - 4096) == 0), 0, "size");
    DAMAGE(meta, poke(meta, 0, &bad64, 8), 0, "bad magic");
    char vmsg[64];
    snprintf(vmsg, sizeof(vmsg), "format version %u", (unsigned)v2);
    DAMAGE(meta, poke(meta, 8, &v2, 4), 0, vmsg);
    uint32_t v1 = 1; /* a dataset of the first format (labels = own class) */
    DAMAGE(meta, poke(meta, 8, &v1, 4), 0, "format version 1, this build reads version 2");
    DAMAGE(meta, poke(meta, offsetof(struct gnn_header, n), &bad64, 8), 0, "header checksum");
    DAMAGE(meta, poke(meta, (off_t)h.meta_labels + 40, &bad32, 4), 0, "labels checksum");
    DAMAGE(meta, poke(meta, (off_t)h.meta_train, &bad32, 4), 0, "split checksum");
    DAMAGE(data1, EXPECT(truncate(data1, (off_t)h.file_bytes - 4096) == 0), 0, "truncated");
    DAMAGE(data0, EXPECT(truncate(data0, (off_t)h.file_bytes + 512) == 0), 0, "size");
    DAMAGE(data0, EXPECT(unlink(data0) == 0), 0, "No such file");
    /* offsets live at the start of data.0 (stripe unit 0) */
    DAMAGE(data0, poke(data0, 8 * 3, &bad64, 8), 0, "CSR offsets");
    /* a neighbour entry: caught only by the topology checksum */
    {
        uint64_t off = h.off_neigh + 4 * 10, unit = off / h.stripe;
        const char *f = unit % 2 ? data1 : data0;
        off_t devoff = (off_t)(unit / 2 * h.stripe + off % h.stripe);
        copy_file(f, "/tmp/mb-gnn-format.bak");
        poke(f, devoff, &bad32, 4);
        EXPECT(opens(0));
        EXPECT(refused(1, data0, "topology checksum"));
        copy_file("/tmp/mb-gnn-format.bak", f);
        EXPECT(opens(1));
    }
    unlink("/tmp/mb-gnn-format.bak");
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup failed\n");
    return TEST_EXIT();
}
