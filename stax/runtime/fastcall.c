/* Stax's compiled per-call entry point (issue 9 item 4): one C call runs a kernel region on
 * NumPy arrays. `run(fn, arrays, flags)` reads each array's data pointer (PyArray_DATA: no
 * ctypes objects), releases the GIL, calls `fn(data..., flags)` and takes the GIL back.
 * Built on first use by stax.runtime.fast into the verified kernel cache; without it the
 * wrapper calls through ctypes.
 *
 * Ctrl-C (issue 8 item 10) [A8]. Python's own SIGINT handler only marks the signal; Python acts
 * on it between bytecodes, which a kernel running in C never reaches. So a call on Python's main
 * thread, while SIGINT raises KeyboardInterrupt (Python's default_int_handler), is *armed*: its
 * flag buffer is published in `armed`, and our C handler (installed once, in front of Python's,
 * which it calls after) ORs STAX_INTERRUPTED into flags[STAX_ANY_FLAG]. Kernels poll that bit
 * between chunks of their outer loop and skip the rest (stax.codegen.cpp); the call then clears
 * the flags and raises KeyboardInterrupt (Python's handler runs through PyErr_CheckSignals), so
 * no half-written output is returned. Not armed, the kernel finishes first, as before: calls on
 * other threads (SIGINT raises KeyboardInterrupt in the main thread only, never in theirs), and
 * calls while SIGINT has a handler of the user's, is ignored or is the default action.
 * Setting the handler again (signal.signal) removes ours; it is put back by the next armed call
 * that sees it missing (checked whenever the Python handler changed, and at most every 50 ms). */
#define PY_SSIZE_T_CLEAN
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <Python.h>
#include <numpy/arrayobject.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#ifndef STAX_ANY_FLAG
#error "compile with -DSTAX_ANY_FLAG=<stax.ops.ANY_FLAG>"
#endif
#define STAX_INTERRUPTED (1 << 30) /* the runtime header's stax_interrupt_bit */
#define VERIFY_SECONDS 0.05        /* how often an armed call checks that our handler is in place */

static int32_t* armed;          /* the flags of the armed call (atomic access), or NULL */
static int in_handler;          /* handlers between reading `armed` and their store */
static struct sigaction chained; /* the handler ours runs after (Python's) */
static int installed;           /* ours was SIGINT's handler when last checked */
static double checked_at;
static unsigned long main_thread; /* threading.main_thread().ident */
static PyObject* getsignal;     /* _signal.getsignal, signal.default_int_handler, SIGINT */
static PyObject* default_handler;
static PyObject* sigint_number;

static void on_sigint(int sig, siginfo_t* info, void* context) {
    __atomic_fetch_add(&in_handler, 1, __ATOMIC_SEQ_CST);
    int32_t* flags = __atomic_load_n(&armed, __ATOMIC_SEQ_CST);
    if (flags != NULL) __atomic_fetch_or(&flags[STAX_ANY_FLAG], STAX_INTERRUPTED, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&in_handler, 1, __ATOMIC_SEQ_CST);
    if (chained.sa_flags & SA_SIGINFO) chained.sa_sigaction(sig, info, context);
    else chained.sa_handler(sig); /* never SIG_IGN/SIG_DFL: ours is not installed over those */
}

static double monotonic(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Put our handler in front of SIGINT's current one, unless it is already there or SIGINT is
 * ignored or has its default action. Main thread, GIL held. */
static void install(void) {
    struct sigaction current, ours;
    if (sigaction(SIGINT, NULL, &current) != 0) { installed = 0; return; }
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigint) { installed = 1; return; }
    /* (sa_handler and sa_sigaction share storage: these values whatever SA_SIGINFO says) */
    if (current.sa_handler == SIG_IGN || current.sa_handler == SIG_DFL) { installed = 0; return; }
    chained = current; /* before ours can run */
    ours = current;
    ours.sa_sigaction = on_sigint;
    ours.sa_flags = current.sa_flags | SA_SIGINFO;
    installed = sigaction(SIGINT, &ours, NULL) == 0;
}

/* Arm a call with `flags`: 1 if armed (*prev: the flags armed before, restored by disarm),
 * 0 if the call is not interruptible, -1 with an exception set. GIL held. */
static int arm(int32_t* flags, int32_t** prev) {
    if (flags == NULL || getsignal == NULL || PyThread_get_thread_ident() != main_thread) return 0;
    PyObject* handler = PyObject_CallOneArg(getsignal, sigint_number);
    if (handler == NULL) return -1;
    int raises = handler == default_handler;
    Py_DECREF(handler);
    if (!raises) { installed = 0; return 0; } /* checked again once the default is back */
    double now = monotonic();
    if (!installed || now - checked_at > VERIFY_SECONDS) {
        install();
        checked_at = now;
    }
    if (!installed) return 0;
    *prev = __atomic_exchange_n(&armed, flags, __ATOMIC_SEQ_CST);
    return 1;
}

/* Disarm; after an interrupt clear the flags (no stale error of the stopped kernel reaches the
 * next call) and set KeyboardInterrupt. Returns -1 with the exception set, else 0. */
static int disarm(int32_t* flags, int32_t* prev) {
    __atomic_store_n(&armed, prev, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&in_handler, __ATOMIC_SEQ_CST) != 0) {} /* a store still to land */
    if (!(__atomic_load_n(&flags[STAX_ANY_FLAG], __ATOMIC_SEQ_CST) & STAX_INTERRUPTED)) return 0;
    memset(flags, 0, sizeof(int32_t) * (STAX_ANY_FLAG + 1));
    if (PyErr_CheckSignals() == 0) PyErr_SetNone(PyExc_KeyboardInterrupt);
    return -1;
}

/* regions take up to MAX_ARGS pointers and the flag buffer, each case calling through the
 * matching function type; [CALL] a region with more (up to MAX_MANY, -D by stax.runtime.fast)
 * is called through its entry taking one array of the addresses (the wrapper passes that
 * entry: stax.backends.MANY_ARGS, -DSTAX_MANY_ARGS, is MAX_ARGS) */
#define MAX_ARGS 16
#if !defined(STAX_MANY_ARGS) || STAX_MANY_ARGS != MAX_ARGS || !defined(MAX_MANY)
#error "compile with -DSTAX_MANY_ARGS=16 (stax.backends.MANY_ARGS) and -DMAX_MANY=<count>"
#endif
#define MAX_SIZES 64
typedef void* P;

static void call_region(void* fn, int n, P* p, int32_t* flags) {
    switch (n) {
        case 0: ((void (*)(int32_t*))fn)(flags); break;
        case 1: ((void (*)(P, int32_t*))fn)(p[0], flags); break;
        case 2: ((void (*)(P, P, int32_t*))fn)(p[0], p[1], flags); break;
        case 3: ((void (*)(P, P, P, int32_t*))fn)(p[0], p[1], p[2], flags); break;
        case 4: ((void (*)(P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], flags); break;
        case 5: ((void (*)(P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], flags); break;
        case 6: ((void (*)(P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], flags); break;
        case 7: ((void (*)(P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], flags); break;
        case 8: ((void (*)(P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], flags); break;
        case 9: ((void (*)(P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], flags); break;
        case 10: ((void (*)(P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], flags); break;
        case 11: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], flags); break;
        case 12: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], flags); break;
        case 13: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], flags); break;
        case 14: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], flags); break;
        case 15: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], flags); break;
        case 16: ((void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, int32_t*))fn)(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15], flags); break;
    }
}

/* [H9] OpenMP's thread-count setting of the calling thread (nthreads-var), from the libgomp
 * the kernel libraries loaded (looked up until found: none may be loaded yet). */
static void (*set_threads)(int);
static int (*get_threads)(void);

static int openmp(void) {
    if (set_threads != NULL) return 1;
    void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (gomp == NULL) return 0;
    get_threads = (int (*)(void))dlsym(gomp, "omp_get_max_threads");
    if (get_threads != NULL) set_threads = (void (*)(int))dlsym(gomp, "omp_set_num_threads");
    return set_threads != NULL;
}

/* run(fn, arrays, flags[, team]): flags is the address of the call's flag buffer (checked by
 * the caller), or None [H9]: a zeroed buffer on this stack, and run returns None when the
 * kernel set no flag, else the buffer's values as a tuple (stax.runtime.wrapper.raise_flags).
 * team [H9]: the calling thread's OpenMP thread count during the call (then restored), which
 * caps the team of every region of the call (num_threads(min(planned, omp_get_max_threads())),
 * stax.tiling.threads.team).
 * An element of arrays may be a tuple of ints instead (a generic program's sizes): the kernel
 * reads them as int64 values on this stack. */
static PyObject* run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs < 3 || nargs > 4 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "run(fn: int, arrays: tuple, flags: int | None, team: int = 0)");
        return NULL;
    }
    void* fn = PyLong_AsVoidPtr(args[0]);
    int32_t local[STAX_ANY_FLAG + 1] = {0};
    int32_t* flags = args[2] == Py_None ? local : (int32_t*)PyLong_AsVoidPtr(args[2]);
    long team = nargs == 4 ? PyLong_AsLong(args[3]) : 0;
    if (PyErr_Occurred()) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args[1]);
    if (n > MAX_MANY) {
        PyErr_SetString(PyExc_ValueError, "stax: too many kernel arguments for the fast call");
        return NULL;
    }
    P p[MAX_MANY];
    int64_t sizes[MAX_SIZES]; /* [H9] a generic program's sizes, given as a tuple of ints */
    int sized = 0;
    for (Py_ssize_t k = 0; k < n; k += 1) {
        PyObject* a = PyTuple_GET_ITEM(args[1], k);
        if (PyTuple_Check(a)) {
            Py_ssize_t m = PyTuple_GET_SIZE(a);
            if (sized || m > MAX_SIZES) {
                PyErr_SetString(PyExc_ValueError, "stax: one tuple of at most 64 sizes per call");
                return NULL;
            }
            for (Py_ssize_t j = 0; j < m; j += 1) {
                sizes[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(a, j));
                if (sizes[j] == -1 && PyErr_Occurred()) return NULL;
            }
            sized = 1;
            p[k] = sizes;
            continue;
        }
        if (!PyArray_Check(a)) {
            PyErr_Format(PyExc_TypeError, "stax: kernel argument %zd is not an ndarray", k);
            return NULL;
        }
        p[k] = PyArray_DATA((PyArrayObject*)a);
    }
    int32_t* prev = NULL;
    int armed_call = arm(flags, &prev);
    if (armed_call < 0) return NULL;
    int threads = team > 0 && openmp() ? get_threads() : 0; /* to restore */
    if (threads > 0) set_threads((int)team);
    Py_BEGIN_ALLOW_THREADS
    if (n > MAX_ARGS) ((void (*)(P const*, int32_t*))fn)(p, flags); /* the `_args` entry */
    else call_region(fn, (int)n, p, flags);
    Py_END_ALLOW_THREADS
    if (threads > 0) set_threads(threads);
    if (armed_call && disarm(flags, prev) < 0) return NULL;
    if (flags != local || local[STAX_ANY_FLAG] == 0) Py_RETURN_NONE;
    PyObject* set = PyTuple_New(STAX_ANY_FLAG + 1);
    if (set == NULL) return NULL;
    for (int k = 0; k <= STAX_ANY_FLAG; k += 1) {
        PyObject* v = PyLong_FromLong(local[k]);
        if (v == NULL) { Py_DECREF(set); return NULL; }
        PyTuple_SET_ITEM(set, k, v);
    }
    return set;
}

/* replay(code, consts, leaves, frame, chunks[, team]) [issue 12]: a recorded stax.nested program
 * (stax.nested.native translates its steps to `code`, an int64 array) run as one C call: the
 * argument checks and conversions that are no-ops for the arrays given, the guards as
 * comparisons, the layouts as (k, n, width) triples, the allocations and the kernels in
 * sequence. Returns the program's result, or None to *bail*: a conversion that would copy, a
 * guard that differs, a bad range, a flag set by a kernel; the caller then replays the steps
 * in Python, which computes what differs, raises the proper error or retraces. consts: the
 * Python objects the code names (dtypes, step names, the allocator of large arrays: called as
 * consts[0](consts[1], frame, name, (size,), dtype), stax.nested.tape._allocate); chunks: the
 * kernels' forced chunk count; team: as run's, the OpenMP thread count during the call (the
 * cores idle now, stax.tiling.threads.team). */
enum {
    R_TOP_LAYOUT = 1, /* out, x: the top layout of an array (k 1, n = width = len(x)) */
    R_SAME,           /* out, x, type, contiguous: x when it is an array of at least one
                       * dimension in native order with that dtype (a typenum, -1 one of
                       * R_NATIVE_TYPES, -2 any) and, if asked, C-contiguous */
    R_NOT_NEGATIVE,   /* out, x: x (int64) when no element is negative */
    R_GUARD_FITS,     /* a, layout, expect: x.size == layout.n */
    R_ALLOC,          /* out, layout (-1: the top level's, one element), per (0 n, 1 k),
                       * dtype const, name const */
    R_GUARD_EMPTY,    /* layout, per, expect */
    R_KERNEL,         /* address const, layout, segmented, n or -1, count, slots... */
    R_SHAPED,         /* out, values, layout: values when it is 1-D of layout.n elements */
    R_RETURN,         /* count (-1: one value), slots... */
    R_BOUNDS,         /* out, lengths (int64), limit: [0, l0, l0+l1, ...] (fewer than limit) */
    R_FROM_BOUNDS,    /* out, bounds: the layout of those bounds (k, n = bounds[k], width 0) */
    R_CALL3,          /* out, function const, a, b, layout: f(a, b, the layout's bounds) */
    R_GUARD_ANY,      /* a, zero, expect: whether an element of a (int64: counts of failed
                       * checks, lengths) is zero (zero 1) or is not zero (zero 0) */
    R_ATTR,           /* out, x, type const, name const: x.name when type(x) is that type */
    R_GUARD_SAME_LENGTHS, /* a, la, b, lb, expect: whether two layouts have the same segment
                       * lengths; la, lb: their lengths (int64, k of them) or -1 for a uniform
                       * layout's (its width) */
    R_GUARD_BALANCED, /* layout, limit, expect: a layout with bounds whose n is under limit or
                       * whose longest segment holds at most n / 8 elements */
    R_GUARD_EMPTY_ARRAY, /* a, expect: whether a has no element */
    R_TOP_LENGTHS,    /* out, layout: [layout.n] (int64), the lengths of a top layout */
};
#define REPLAY_SLOTS 256
#define RECYCLE_MIN_BYTES (1 << 17) /* stax.nested.tape.RECYCLE_MIN_BYTES */

typedef struct { PyObject* obj; int64_t k, n, width; } Slot;

static int same_array(PyObject* x, int64_t type, int64_t contiguous, const int64_t* natives) {
    if (!PyArray_Check(x)) return 0;
    PyArrayObject* a = (PyArrayObject*)x;
    if (PyArray_NDIM(a) == 0 || !PyArray_ISNOTSWAPPED(a) || !PyArray_ISALIGNED(a)) return 0;
    if (contiguous && !PyArray_IS_C_CONTIGUOUS(a)) return 0;
    if (type >= 0) return PyArray_TYPE(a) == type;
    if (type == -2) return 1;
    for (int64_t j = 1; j <= natives[0]; j += 1) if (natives[j] == PyArray_TYPE(a)) return 1;
    return 0;
}

/* Whether no element of an int64 array is negative: an OR of the sign bits, 4 lanes at once
 * (AVX2 where the CPU has it; two SSE2 registers otherwise). */
typedef uint64_t u64x4 __attribute__((vector_size(32)));

__attribute__((target_clones("avx2", "default")))
static int not_negative(const int64_t* v, npy_intp n) {
    u64x4 acc = {0, 0, 0, 0};
    npy_intp i = 0;
    for (; i + 4 <= n; i += 4) {
        u64x4 x;
        memcpy(&x, v + i, sizeof x);
        acc |= x;
    }
    uint64_t any = acc[0] | acc[1] | acc[2] | acc[3];
    for (; i < n; i += 1) any |= (uint64_t)v[i];
    return (int64_t)any >= 0;
}

/* Whether layouts a and b (with their segment lengths la, lb: int64 arrays, or NULL for a
 * uniform layout, whose segments all hold its width) have the same segment lengths, as
 * stax.nested.flatten._same_lengths; -1 when lengths are missing or not k int64 values. */
static int segment_lengths_equal(const Slot* a, PyObject* la, const Slot* b, PyObject* lb,
                                 const int64_t* natives) {
    if (la != NULL && la == lb) return 1;
    if ((la == NULL) != (a->obj == NULL) || (lb == NULL) != (b->obj == NULL)) return -1;
    if ((la != NULL && (!same_array(la, NPY_INT64, 1, natives)
                        || PyArray_SIZE((PyArrayObject*)la) != a->k))
        || (lb != NULL && (!same_array(lb, NPY_INT64, 1, natives)
                           || PyArray_SIZE((PyArrayObject*)lb) != b->k))) return -1;
    if (a->k != b->k || a->n != b->n) return 0;
    const int64_t* va = la != NULL ? (const int64_t*)PyArray_DATA((PyArrayObject*)la) : NULL;
    const int64_t* vb = lb != NULL ? (const int64_t*)PyArray_DATA((PyArrayObject*)lb) : NULL;
    for (int64_t j = 0; j < a->k; j += 1)
        if ((va != NULL ? va[j] : a->width) != (vb != NULL ? vb[j] : b->width)) return 0;
    return 1;
}

static PyObject* replay(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if ((nargs != 5 && nargs != 6) || !PyArray_Check(args[0]) || !PyTuple_Check(args[1])
        || !PyList_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "replay(code, consts: tuple, leaves: list, frame, chunks, team: int = 0)");
        return NULL;
    }
    long team = nargs == 6 ? PyLong_AsLong(args[5]) : 0; /* as run's team */
    if (team == -1 && PyErr_Occurred()) return NULL;
    const int64_t* code = (const int64_t*)PyArray_DATA((PyArrayObject*)args[0]);
    PyObject* consts = args[1];
    int64_t chunks = PyLong_AsLongLong(args[4]);
    if (chunks == -1 && PyErr_Occurred()) return NULL;
    Slot s[REPLAY_SLOTS];
    Py_ssize_t leaves = PyList_GET_SIZE(args[2]);
    if (leaves > REPLAY_SLOTS) Py_RETURN_NONE;
    memset(s, 0, sizeof(s));
    for (Py_ssize_t j = 0; j < leaves; j += 1) s[j].obj = PyList_GET_ITEM(args[2], j);
    PyObject* owned[REPLAY_SLOTS]; /* the arrays this call allocated */
    int n_owned = 0;
    PyObject* result = Py_None; /* None: bail */
    int threads = team > 0 && openmp() ? get_threads() : 0; /* to restore */
    if (threads > 0) set_threads((int)team);
    const int64_t* natives = code; /* count, typenums: the dtypes kernels take */
    const int64_t* c = natives + natives[0] + 1;
    for (;;) {
        switch (*c++) {
        case R_TOP_LAYOUT: {
            PyObject* x = s[c[1]].obj;
            if (!PyArray_Check(x) || PyArray_NDIM((PyArrayObject*)x) == 0) goto done;
            s[c[0]].k = 1;
            s[c[0]].n = s[c[0]].width = PyArray_DIM((PyArrayObject*)x, 0);
            c += 2;
            break;
        }
        case R_SAME:
            if (!same_array(s[c[1]].obj, c[2], c[3], natives)) goto done;
            s[c[0]].obj = s[c[1]].obj;
            c += 4;
            break;
        case R_NOT_NEGATIVE:
            if (!same_array(s[c[1]].obj, NPY_INT64, 1, natives)
                || !not_negative((const int64_t*)PyArray_DATA((PyArrayObject*)s[c[1]].obj),
                                 PyArray_SIZE((PyArrayObject*)s[c[1]].obj))) goto done;
            s[c[0]].obj = s[c[1]].obj;
            c += 2;
            break;
        case R_GUARD_FITS:
            if (!PyArray_Check(s[c[0]].obj)
                || (PyArray_SIZE((PyArrayObject*)s[c[0]].obj) == s[c[1]].n) != c[2]) goto done;
            c += 3;
            break;
        case R_GUARD_EMPTY:
            if (((c[1] ? s[c[0]].k : s[c[0]].n) == 0) != c[2]) goto done;
            c += 3;
            break;
        case R_GUARD_ANY: {
            PyObject* x = s[c[0]].obj;
            if (!same_array(x, NPY_INT64, 1, natives)) goto done;
            const int64_t* v = (const int64_t*)PyArray_DATA((PyArrayObject*)x);
            int any = 0;
            for (npy_intp j = 0; j < PyArray_SIZE((PyArrayObject*)x); j += 1)
                any |= (v[j] == 0) == c[1];
            if (any != c[2]) goto done;
            c += 3;
            break;
        }
        case R_ATTR: {
            PyObject* x = s[c[1]].obj;
            if (x == NULL || (PyObject*)Py_TYPE(x) != PyTuple_GET_ITEM(consts, c[2])
                || n_owned >= REPLAY_SLOTS) goto done;
            PyObject* a = PyObject_GetAttr(x, PyTuple_GET_ITEM(consts, c[3]));
            if (a == NULL) { result = NULL; goto done; }
            owned[n_owned++] = a;
            s[c[0]].obj = a;
            c += 4;
            break;
        }
        case R_GUARD_SAME_LENGTHS: {
            int same = segment_lengths_equal(&s[c[0]], c[1] >= 0 ? s[c[1]].obj : NULL,
                                             &s[c[2]], c[3] >= 0 ? s[c[3]].obj : NULL, natives);
            if (same < 0 || same != c[4]) goto done;
            c += 5;
            break;
        }
        case R_GUARD_BALANCED: {
            const Slot* layout = &s[c[0]];
            int balanced = 0;
            if (layout->obj != NULL) {
                const int64_t* b = (const int64_t*)PyArray_DATA((PyArrayObject*)layout->obj);
                int64_t longest = 0;
                for (int64_t j = 0; j < layout->k; j += 1)
                    if (b[j + 1] - b[j] > longest) longest = b[j + 1] - b[j];
                balanced = layout->n < c[1] || longest <= layout->n / 8;
            }
            if (balanced != c[2]) goto done;
            c += 3;
            break;
        }
        case R_GUARD_EMPTY_ARRAY:
            if (!PyArray_Check(s[c[0]].obj)
                || (PyArray_SIZE((PyArrayObject*)s[c[0]].obj) == 0) != c[1]) goto done;
            c += 2;
            break;
        case R_ALLOC: {
            npy_intp size = c[1] < 0 ? 1 : c[2] ? s[c[1]].k : s[c[1]].n;
            PyArray_Descr* dtype = (PyArray_Descr*)PyTuple_GET_ITEM(consts, c[3]);
            PyObject* a;
            if (n_owned >= REPLAY_SLOTS) goto done;
            if (size * (npy_intp)PyDataType_ELSIZE(dtype) < RECYCLE_MIN_BYTES) {
                Py_INCREF(dtype);
                a = PyArray_Empty(1, &size, dtype, 0);
            } else {
                PyObject* call[5] = {PyTuple_GET_ITEM(consts, 1), args[3],
                                     PyTuple_GET_ITEM(consts, c[4]), NULL, (PyObject*)dtype};
                call[3] = Py_BuildValue("(n)", size);
                if (call[3] == NULL) { result = NULL; goto done; }
                a = PyObject_Vectorcall(PyTuple_GET_ITEM(consts, 0), call, 5, NULL);
                Py_DECREF(call[3]);
            }
            if (a == NULL) { result = NULL; goto done; }
            owned[n_owned++] = a;
            s[c[0]].obj = a;
            c += 5;
            break;
        }
        case R_KERNEL: {
            void* fn = PyLong_AsVoidPtr(PyTuple_GET_ITEM(consts, c[0]));
            const Slot* layout = c[1] >= 0 ? &s[c[1]] : NULL;
            int64_t count = c[4];
            if (count + 1 > MAX_ARGS) goto done;
            int64_t sizes[4] = {0, 0, 0, chunks};
            if (c[2]) {
                sizes[0] = layout->n, sizes[1] = layout->k, sizes[2] = layout->width;
            } else {
                sizes[0] = c[3] >= 0 ? c[3] : layout != NULL ? layout->n : 1;
            }
            P p[MAX_ARGS];
            for (int64_t j = 0; j < count; j += 1) {
                PyObject* a = s[c[5 + j]].obj;
                if (!PyArray_Check(a)) goto done;
                p[j] = PyArray_DATA((PyArrayObject*)a);
            }
            p[count] = sizes;
            int32_t flags[STAX_ANY_FLAG + 1] = {0};
            int32_t* prev = NULL;
            int armed_call = arm(flags, &prev);
            if (armed_call < 0) { result = NULL; goto done; }
            Py_BEGIN_ALLOW_THREADS
            call_region(fn, (int)count + 1, p, flags);
            Py_END_ALLOW_THREADS
            if (armed_call && disarm(flags, prev) < 0) { result = NULL; goto done; }
            if (flags[STAX_ANY_FLAG] != 0) goto done;
            c += 5 + count;
            break;
        }
        case R_SHAPED: {
            PyObject* x = s[c[1]].obj;
            if (!PyArray_Check(x) || PyArray_NDIM((PyArrayObject*)x) != 1
                || PyArray_DIM((PyArrayObject*)x, 0) != (c[2] >= 0 ? s[c[2]].n : 1)) goto done;
            s[c[0]].obj = x;
            c += 3;
            break;
        }
        case R_BOUNDS: {
            PyObject* x = s[c[1]].obj;
            if (!same_array(x, NPY_INT64, 1, natives) || PyArray_NDIM((PyArrayObject*)x) != 1
                || PyArray_DIM((PyArrayObject*)x, 0) >= c[2] || n_owned >= REPLAY_SLOTS) goto done;
            npy_intp k = PyArray_DIM((PyArrayObject*)x, 0), size = k + 1;
            PyObject* a = PyArray_SimpleNew(1, &size, NPY_INT64);
            if (a == NULL) { result = NULL; goto done; }
            owned[n_owned++] = a;
            const uint64_t* lengths = (const uint64_t*)PyArray_DATA((PyArrayObject*)x);
            uint64_t* bounds = (uint64_t*)PyArray_DATA((PyArrayObject*)a);
            uint64_t sum = 0; /* wraps as NumPy's int64 cumsum does */
            bounds[0] = 0;
            for (npy_intp j = 0; j < k; j += 1) bounds[j + 1] = sum += lengths[j];
            s[c[0]].obj = a;
            c += 3;
            break;
        }
        case R_TOP_LENGTHS: {
            npy_intp one = 1;
            if (n_owned >= REPLAY_SLOTS) goto done;
            PyObject* a = PyArray_SimpleNew(1, &one, NPY_INT64);
            if (a == NULL) { result = NULL; goto done; }
            owned[n_owned++] = a;
            *(int64_t*)PyArray_DATA((PyArrayObject*)a) = s[c[1]].n;
            s[c[0]].obj = a;
            c += 2;
            break;
        }
        case R_FROM_BOUNDS: {
            PyArrayObject* b = (PyArrayObject*)s[c[1]].obj;
            if (!same_array((PyObject*)b, NPY_INT64, 1, natives) || PyArray_NDIM(b) != 1)
                goto done;
            s[c[0]].k = PyArray_DIM(b, 0) - 1;
            s[c[0]].n = ((const int64_t*)PyArray_DATA(b))[s[c[0]].k];
            s[c[0]].width = 0;
            s[c[0]].obj = (PyObject*)b;
            c += 2;
            break;
        }
        case R_CALL3: {
            PyObject* bounds = s[c[4]].obj;
            if (bounds == NULL || n_owned >= REPLAY_SLOTS) goto done;
            PyObject* call[3] = {s[c[2]].obj, s[c[3]].obj, bounds};
            PyObject* a = PyObject_Vectorcall(PyTuple_GET_ITEM(consts, c[1]), call, 3, NULL);
            if (a == NULL) { result = NULL; goto done; }
            owned[n_owned++] = a;
            s[c[0]].obj = a;
            c += 5;
            break;
        }
        case R_RETURN:
            if (c[0] < 0) {
                result = Py_NewRef(s[c[1]].obj);
            } else {
                result = PyTuple_New(c[0]);
                if (result == NULL) goto done;
                for (int64_t j = 0; j < c[0]; j += 1)
                    PyTuple_SET_ITEM(result, j, Py_NewRef(s[c[1 + j]].obj));
            }
            goto done;
        default:
            PyErr_SetString(PyExc_ValueError, "stax: bad replay code");
            result = NULL;
            goto done;
        }
    }
done:
    if (threads > 0) set_threads(threads);
    for (int j = 0; j < n_owned; j += 1) Py_DECREF(owned[j]);
    if (result == Py_None) Py_RETURN_NONE;
    return result;
}

/* key(args) -> bytes | None [H9, issue 9]: the signature of a call's arguments packed into one
 * bytes object, or None when an argument is anything else than a plain ndarray of a built-in,
 * native dtype, aligned, with strides that are multiples of its itemsize (arrays kernels read
 * as they are), an exact Python float, int or [CALL] bool, or a NumPy scalar of such a dtype
 * (its tag and dtype number: [HUNT2] `np.float32(0.5)`). Per array: its tag, dtype number,
 * rank, shape and strides, so equal keys mean arguments the same compiled wrapper accepts. */
#define KEY_WORDS 512
enum { KEY_ARRAY = 1, KEY_FLOAT = 2, KEY_INT = 3, KEY_SCALAR = 4, KEY_BOOL = 5 };

static PyObject* key(PyObject* self, PyObject* args) {
    if (!PyTuple_Check(args)) {
        PyErr_SetString(PyExc_TypeError, "key(args: tuple)");
        return NULL;
    }
    int64_t words[KEY_WORDS];
    Py_ssize_t n = 0, nargs = PyTuple_GET_SIZE(args);
    for (Py_ssize_t k = 0; k < nargs; k += 1) {
        PyObject* a = PyTuple_GET_ITEM(args, k);
        if (Py_IS_TYPE(a, &PyFloat_Type)) { if (n >= KEY_WORDS) Py_RETURN_NONE; words[n++] = KEY_FLOAT; continue; }
        if (Py_IS_TYPE(a, &PyLong_Type)) { if (n >= KEY_WORDS) Py_RETURN_NONE; words[n++] = KEY_INT; continue; }
        if (Py_IS_TYPE(a, &PyBool_Type)) { if (n >= KEY_WORDS) Py_RETURN_NONE; words[n++] = KEY_BOOL; continue; }
        if (PyArray_IsScalar(a, Number) || PyArray_IsScalar(a, Bool)) {
            PyArray_Descr* descr = PyArray_DescrFromScalar(a);
            int type_num = descr->type_num, exact = Py_IS_TYPE(a, descr->typeobj);
            Py_DECREF(descr);
            if (!exact || type_num == NPY_OBJECT || type_num >= NPY_STRING || n >= KEY_WORDS)
                Py_RETURN_NONE;
            words[n++] = KEY_SCALAR | ((int64_t)type_num << 8);
            continue;
        }
        if (!Py_IS_TYPE(a, &PyArray_Type)) Py_RETURN_NONE;
        PyArrayObject* arr = (PyArrayObject*)a;
        PyArray_Descr* descr = PyArray_DESCR(arr);
        int type_num = descr->type_num;
        if (type_num == NPY_OBJECT || type_num >= NPY_STRING) Py_RETURN_NONE; /* numbers only */
        PyArray_Descr* canonical = PyArray_DescrFromType(type_num); /* a built-in singleton */
        Py_XDECREF(canonical);
        if (descr != canonical || !PyArray_ISALIGNED(arr)) Py_RETURN_NONE;
        int ndim = PyArray_NDIM(arr);
        if (n + 2 + 2 * (Py_ssize_t)ndim > KEY_WORDS) Py_RETURN_NONE;
        npy_intp itemsize = PyArray_ITEMSIZE(arr);
        npy_intp* shape = PyArray_DIMS(arr);
        npy_intp* strides = PyArray_STRIDES(arr);
        words[n++] = KEY_ARRAY | ((int64_t)type_num << 8);
        words[n++] = ndim;
        for (int d = 0; d < ndim; d += 1) {
            if (strides[d] % itemsize != 0) Py_RETURN_NONE;
            words[n++] = shape[d];
            words[n++] = strides[d];
        }
    }
    return PyBytes_FromStringAndSize((const char*)words, n * (Py_ssize_t)sizeof(int64_t));
}

/* The bytes [lo, hi) an array addresses (NumPy's memory extent; empty for an empty array). */
static void extent(PyArrayObject* a, char** lo, char** hi) {
    char* low = PyArray_BYTES(a);
    char* high = low + PyArray_ITEMSIZE(a);
    npy_intp* shape = PyArray_DIMS(a);
    npy_intp* strides = PyArray_STRIDES(a);
    for (int d = 0; d < PyArray_NDIM(a); d += 1) {
        if (shape[d] == 0) { *lo = *hi = PyArray_BYTES(a); return; }
        npy_intp span = strides[d] * (shape[d] - 1);
        if (span > 0) high += span; else low += span;
    }
    *lo = low;
    *hi = high;
}

/* disjoint(arrays, i) -> bool [LOOPS]: whether arrays[i] (a tuple or list) shares no memory with
 * any other ndarray in it, by np.may_share_memory's bounds test (a False may still be disjoint
 * element by element: the caller asks np.shares_memory then). Other objects are skipped. */
static PyObject* disjoint(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2 || !(PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        PyErr_SetString(PyExc_TypeError, "disjoint(arrays: tuple | list, i: int)");
        return NULL;
    }
    PyObject* seq = args[0];
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), i = PyLong_AsSsize_t(args[1]);
    if (i == -1 && PyErr_Occurred()) return NULL;
    PyObject** items = PySequence_Fast_ITEMS(seq);
    if (i < 0 || i >= n || !PyArray_Check(items[i])) {
        PyErr_SetString(PyExc_ValueError, "disjoint: arrays[i] must be an ndarray");
        return NULL;
    }
    char *lo, *hi;
    extent((PyArrayObject*)items[i], &lo, &hi);
    if (lo == hi) Py_RETURN_TRUE;  /* an empty array shares no memory */
    for (Py_ssize_t k = 0; k < n; k += 1) {
        if (k == i || !PyArray_Check(items[k])) continue;
        char *other_lo, *other_hi;
        extent((PyArrayObject*)items[k], &other_lo, &other_hi);
        if (other_lo < other_hi && lo < other_hi && other_lo < hi) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

/* For calls made through ctypes (stax.runtime.fast.interruptible): arm(flags) -> token, then
 * disarm(flags, token) after the call, raising KeyboardInterrupt if it was interrupted. */
static PyObject* py_arm(PyObject* self, PyObject* address) {
    int32_t* flags = (int32_t*)PyLong_AsVoidPtr(address);
    if (PyErr_Occurred()) return NULL;
    int32_t* prev = NULL;
    int armed_call = arm(flags, &prev);
    if (armed_call < 0) return NULL;
    if (!armed_call) Py_RETURN_NONE;
    return PyLong_FromVoidPtr(prev);
}

static PyObject* py_disarm(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "disarm(flags: int, token: int | None)");
        return NULL;
    }
    if (args[1] == Py_None) Py_RETURN_NONE;
    int32_t* flags = (int32_t*)PyLong_AsVoidPtr(args[0]);
    int32_t* prev = (int32_t*)PyLong_AsVoidPtr(args[1]);
    if (PyErr_Occurred()) return NULL;
    if (disarm(flags, prev) < 0) return NULL;
    Py_RETURN_NONE;
}

/* setup(main_thread_ident, signal.getsignal, signal.default_int_handler, SIGINT): at import
 * and in a forked child (whose main thread is the one that forked). */
static PyObject* py_setup(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "setup(main_thread, getsignal, default_int_handler, SIGINT)");
        return NULL;
    }
    unsigned long ident = PyLong_AsUnsignedLong(args[0]);
    if (PyErr_Occurred()) return NULL;
    main_thread = ident;
    __atomic_store_n(&armed, NULL, __ATOMIC_SEQ_CST);
    __atomic_store_n(&in_handler, 0, __ATOMIC_SEQ_CST);
    Py_XSETREF(getsignal, Py_NewRef(args[1]));
    Py_XSETREF(default_handler, Py_NewRef(args[2]));
    Py_XSETREF(sigint_number, Py_NewRef(args[3]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(fn, arrays, flags[, team])"},
    {"key", (PyCFunction)key, METH_O, "key(args) -> bytes | None"},
    {"replay", (PyCFunction)(void (*)(void))replay, METH_FASTCALL,
     "replay(code, consts, leaves, frame, chunks[, team]) -> result | None"},
    {"disjoint", (PyCFunction)(void (*)(void))disjoint, METH_FASTCALL,
     "disjoint(arrays, i) -> bool"},
    {"arm", (PyCFunction)py_arm, METH_O, "arm(flags) -> token"},
    {"disarm", (PyCFunction)(void (*)(void))py_disarm, METH_FASTCALL, "disarm(flags, token)"},
    {"setup", (PyCFunction)(void (*)(void))py_setup, METH_FASTCALL,
     "setup(main_thread, getsignal, default_int_handler, SIGINT)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "stax_fastcall", NULL, -1, methods};

PyMODINIT_FUNC PyInit_stax_fastcall(void) {
    import_array();
    return PyModule_Create(&module);
}
