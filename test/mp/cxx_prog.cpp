// A C++ OpenSHMEM program, built by test/mp/cxx_wrapper.sh with the
// oshc++ wrapper of this build: C++ classes and the standard library around
// the typed routines and the type-generic names, which C++ gets as
// overloads (include/shmem/cxx.h), with and without a context, on a team,
// plus the SOS names of <shmemx.h>. Every result is checked; a failure
// prints one line and ends the job with status 1.
#include <shmem.h>
#include <shmemx.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

int me, npes;

void fail(int line, const std::string &what)
{
    std::fprintf(stderr, "FAIL: PE %d: cxx_prog.cpp:%d: %s\n", me, line,
                 what.c_str());
    std::fflush(stderr);
    shmem_global_exit(1);
}
#define EXPECT(cond, what)                                                     \
    do {                                                                       \
        if (!(cond))                                                           \
            fail(__LINE__, what);                                              \
    } while (0)

// A symmetric array owned by an object: allocated and freed collectively.
template <typename T> class SymArray {
  public:
    explicit SymArray(size_t n)
        : n_(n), p_(static_cast<T *>(shmem_calloc(n, sizeof(T))))
    {
        EXPECT(p_ != nullptr, "shmem_calloc");
    }
    ~SymArray() { shmem_free(p_); }
    SymArray(const SymArray &) = delete;
    SymArray &operator=(const SymArray &) = delete;
    T *data() { return p_; }
    T &operator[](size_t i) { return p_[i]; }
    size_t size() const { return n_; }

  private:
    size_t n_;
    T *p_;
};

// put/get/p/g through the generic names for one element type.
template <typename T> void rma_roundtrip(T base)
{
    const int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    SymArray<T> buf(8);
    std::vector<T> mine(8), back(8);
    for (size_t i = 0; i < mine.size(); i++)
        mine[i] = static_cast<T>(base + static_cast<T>(me * 10 + i));
    shmem_barrier_all();
    shmem_put(buf.data(), mine.data(), mine.size(), right);
    shmem_barrier_all();
    for (size_t i = 0; i < buf.size(); i++)
        EXPECT(buf[i] == static_cast<T>(base + static_cast<T>(left * 10 + i)),
               "shmem_put (generic) element " + std::to_string(i));
    shmem_get(SHMEM_CTX_DEFAULT, back.data(), buf.data(), back.size(), right);
    EXPECT(back == mine, "shmem_get (generic, context form)");
    shmem_barrier_all();
    shmem_p(&buf[0], static_cast<T>(base + 1), right);
    shmem_barrier_all();
    EXPECT(shmem_g(&buf[0], me) == static_cast<T>(base + 1), "shmem_p/shmem_g");
    shmem_barrier_all();
}

void amo_and_wait()
{
    static long counter;           // symmetric (static)
    static unsigned long long bits; // symmetric
    static int flags[4];
    shmem_ctx_t ctx;
    EXPECT(shmem_ctx_create(0, &ctx) == 0, "shmem_ctx_create");
    counter = 0;
    bits = 0;
    shmem_barrier_all();
    long old = shmem_atomic_fetch_add(&counter, 2L, 0);
    (void)old;
    shmem_atomic_add(ctx, &counter, 1L, 0);
    shmem_atomic_fetch_or(&bits, 1ull << me, 0);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (me == 0) {
        EXPECT(counter == 3L * npes, "shmem_atomic_fetch_add/add: " +
                                         std::to_string(counter));
        EXPECT(bits == (npes == 64 ? ~0ull : (1ull << npes) - 1),
               "shmem_atomic_fetch_or");
    }
    shmem_ctx_destroy(ctx);

    // Every PE raises its flag on PE 0 (index me % 4); PE 0 waits for
    // them with the generic wait and test names, status NULL.
    for (int &f : flags)
        f = 0;
    shmem_barrier_all();
    shmem_atomic_add(&flags[me % 4], 1, 0);
    if (me == 0) {
        const int want = npes < 4 ? 1 : npes / 4;
        shmem_wait_until(&flags[0], SHMEM_CMP_GE, want);
        size_t idx = shmem_test_any(flags, 1, NULL, SHMEM_CMP_GE, want);
        EXPECT(idx == 0, "shmem_test_any (generic, NULL status)");
        shmem_wait_until_all(flags, static_cast<size_t>(npes < 4 ? npes : 4),
                             nullptr, SHMEM_CMP_GE, 1);
    }
    shmem_barrier_all();
}

void collectives()
{
    SymArray<long> src(4), sum(4), all(4 * static_cast<size_t>(npes)),
        root(4);
    for (size_t i = 0; i < 4; i++)
        src[i] = me + static_cast<long>(i);
    shmem_barrier_all();
    EXPECT(shmem_sum_reduce(SHMEM_TEAM_WORLD, sum.data(), src.data(), 4) == 0,
           "shmem_sum_reduce");
    for (size_t i = 0; i < 4; i++)
        EXPECT(sum[i] == npes * (npes - 1) / 2 + npes * static_cast<long>(i),
               "shmem_sum_reduce element " + std::to_string(i));
    EXPECT(shmem_fcollect(SHMEM_TEAM_WORLD, all.data(), src.data(), 4) == 0,
           "shmem_fcollect");
    for (int pe = 0; pe < npes; pe++)
        EXPECT(all[4 * static_cast<size_t>(pe)] == pe, "shmem_fcollect block");
    EXPECT(shmem_broadcast(SHMEM_TEAM_WORLD, root.data(), src.data(), 4,
                           npes - 1) == 0,
           "shmem_broadcast");
    if (me != npes - 1)
        EXPECT(root[3] == npes - 1 + 3, "shmem_broadcast data");
    EXPECT(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync (team overload)");
    // The SOS names from <shmemx.h>.
    std::vector<int> in(3, me + 1), out(3);
    SymArray<int> sin(3), sout(3);
    for (size_t i = 0; i < 3; i++)
        sin[i] = in[i];
    shmem_barrier_all();
    EXPECT(shmemx_int_sum_inscan(SHMEM_TEAM_WORLD, sout.data(), sin.data(),
                                 3) == 0,
           "shmemx_int_sum_inscan");
    EXPECT(sout[2] == (me + 1) * (me + 2) / 2, "shmemx_int_sum_inscan data");
    EXPECT(shmem_team_n_pes(SHMEMX_TEAM_NODE) >= 1, "SHMEMX_TEAM_NODE");
    /* SOS's generic signal names with a context first (C++ overloads). */
    static uint64_t sig;
    shmemx_signal_set(SHMEM_CTX_DEFAULT, &sig, 5, me);
    shmemx_signal_add(SHMEM_CTX_DEFAULT, &sig, 2, me);
    shmemx_signal_add(&sig, 1, me);
    EXPECT(shmem_signal_fetch(&sig) == 8, "shmemx_signal_set/add, ctx forms");
    shmem_barrier_all();
}

} // namespace

int main()
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const double t0 = shmemx_wtime();

    rma_roundtrip<int>(1);
    rma_roundtrip<double>(0.5);
    rma_roundtrip<unsigned long long>(7);
    rma_roundtrip<char>('a');
    amo_and_wait();
    collectives();

    shmem_barrier_all();
    if (me == 0)
        std::printf("cxx_prog: %d PEs, %.3f s\n", npes, shmemx_wtime() - t0);
    shmem_finalize();
    return 0;
}
