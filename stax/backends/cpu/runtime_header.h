// Stax kernel runtime: scalar semantics that match NumPy, without undefined behaviour.
// Compiled with -fwrapv, so signed integer overflow wraps as in NumPy.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <omp.h>

// Vector variants from glibc's libmvec: with these declarations `#pragma omp simd` loops that
// call them are vectorized (e.g. _ZGVeN16v_expf for AVX-512). libmvec is accurate to 4 ulp.
#define STAX_SIMD_MATH1(name) \
    __attribute__((simd("notinbranch"))) float name##f(float) noexcept; \
    __attribute__((simd("notinbranch"))) double name(double) noexcept;
#define STAX_SIMD_MATH2(name) \
    __attribute__((simd("notinbranch"))) float name##f(float, float) noexcept; \
    __attribute__((simd("notinbranch"))) double name(double, double) noexcept;
extern "C" {
STAX_SIMD_MATH1(exp) STAX_SIMD_MATH1(exp2) STAX_SIMD_MATH1(expm1) STAX_SIMD_MATH1(log)
STAX_SIMD_MATH1(log2) STAX_SIMD_MATH1(log10) STAX_SIMD_MATH1(log1p) STAX_SIMD_MATH1(sin)
STAX_SIMD_MATH1(cos) STAX_SIMD_MATH1(tan) STAX_SIMD_MATH1(sinh) STAX_SIMD_MATH1(cosh)
STAX_SIMD_MATH1(tanh) STAX_SIMD_MATH1(asin) STAX_SIMD_MATH1(acos) STAX_SIMD_MATH1(atan)
STAX_SIMD_MATH1(asinh) STAX_SIMD_MATH1(acosh) STAX_SIMD_MATH1(atanh) STAX_SIMD_MATH1(cbrt)
STAX_SIMD_MATH2(atan2) STAX_SIMD_MATH2(hypot) STAX_SIMD_MATH2(pow)
// sin and cos under other names: g++ merges sin(x) and cos(x) of one x into a scalar `sincos`
// call, which has no vector variant (the loop stayed scalar); these still call libmvec's
// _ZGV*_sin/_ZGV*_cos. [B, issue 9]
__attribute__((simd("notinbranch"))) float stax_sinf(float) noexcept __asm__("sinf");
__attribute__((simd("notinbranch"))) double stax_sin(double) noexcept __asm__("sin");
__attribute__((simd("notinbranch"))) float stax_cosf(float) noexcept __asm__("cosf");
__attribute__((simd("notinbranch"))) double stax_cos(double) noexcept __asm__("cos");
}

// float16 [VEC5, issue 9]: NumPy's half, held as its bits and converted by integer and float32
// operations without branches, so loops that load, compute and store float16 vectorize at every
// ISA level (g++ 12 has no vector conversion for _Float16, and F16C's only scalar intrinsics
// left each such loop scalar). Both directions are NumPy's (npy_half): round to nearest even,
// subnormals, +-inf, NaN with its sign and payload (a NaN whose payload would vanish keeps bit
// 0). From double it rounds once (npy_double_to_half); from integers through float, as NumPy.
static inline float stax_h2f(uint16_t h) {
    const uint32_t em = (uint32_t)(h & 0x7fffu) << 13;  // exponent and mantissa, float-aligned
    const uint32_t e = em & (0x1fu << 23);
    const float sub = __builtin_bit_cast(float, em + (113u << 23)) -
                      __builtin_bit_cast(float, 113u << 23);  // subnormal: exact in float
    const uint32_t r = e == (0x1fu << 23) ? em + (224u << 23)  // inf, NaN
                       : e == 0 ? __builtin_bit_cast(uint32_t, sub) : em + (112u << 23);
    return __builtin_bit_cast(float, r | (uint32_t)(h & 0x8000u) << 16);
}
static inline uint16_t stax_f2h(float f) {
    const uint32_t u = __builtin_bit_cast(uint32_t, f), a = u & 0x7fffffffu;
    const uint32_t nan = 0x7c00u | (a >> 13 & 0x3ffu) | ((a & 0x7fe000u) == 0);
    const uint32_t big = a > 0x7f800000u ? nan : 0x7c00u;  // NaN; inf and |f| >= 65520
    // |f| < 2^-14: adding 0.5 (ulp 2^-24, a half subnormal's step) rounds to nearest even
    const uint32_t sub = __builtin_bit_cast(uint32_t, __builtin_bit_cast(float, a) + 0.5f) -
                         0x3f000000u;
    const uint32_t norm = (a - (112u << 23) + 0xfffu + (a >> 13 & 1u)) >> 13;
    const uint32_t r = a >= 0x477ff000u ? big : a < 0x38800000u ? sub : norm;
    return (uint16_t)(r | (u >> 16 & 0x8000u));
}
static inline uint16_t stax_d2h(double d) {
    const uint64_t u = __builtin_bit_cast(uint64_t, d), a = u & 0x7fffffffffffffffull;
    const uint64_t nan = 0x7c00u | (a >> 42 & 0x3ffu) | ((a & 0xffc0000000000ull) == 0);
    const uint64_t big = a > 0x7ff0000000000000ull ? nan : 0x7c00u;
    // |d| < 2^-14: adding 2^28 (ulp 2^-24) rounds to nearest even
    const uint64_t sub = __builtin_bit_cast(uint64_t, __builtin_bit_cast(double, a) + 0x1p28) -
                         0x41b0000000000000ull;
    const uint64_t norm = (a - (1008ull << 52) + 0x1ffffffffffull + (a >> 42 & 1u)) >> 42;
    const uint64_t r = a >= 0x40effe0000000000ull ? big : a < 0x3f10000000000000ull ? sub : norm;
    return (uint16_t)(r | (u >> 48 & 0x8000u));
}
// Hardware conversions [F16X, issue 9]: where the ISA level has F16C (avx2, avx512), float16
// loads and stores convert 8 or 16 values with one vcvtph2ps/vcvtps2ph, as Inductor does. g++ 12
// does not vectorize F16C's scalar intrinsics, so the vector forms are this header's own simd
// variants (the _ZGV names g++ calls from a vectorized loop, as for libmvec's expf): stax_h2f_simd
// and stax_f2h_simd are declared `simd` under the names of the portable scalar functions above,
// which the loops' scalar remainders call. Halves travel in int32 lanes (one lane width with the
// floats). Results are NumPy's bit for bit: the hardware rounds to nearest even as npy_half does;
// it quiets a signaling NaN, which NumPy keeps signaling, so a vector holding a NaN is converted
// again by the portable code.
#if defined(__F16C__) && defined(__AVX2__)
#define STAX_HIDDEN extern "C" __attribute__((visibility("hidden")))
STAX_HIDDEN float stax_h2f_one(int32_t h) { return stax_h2f((uint16_t)h); }
STAX_HIDDEN int32_t stax_f2h_one(float f) { return stax_f2h(f); }
__attribute__((simd("notinbranch"), const, nothrow)) float stax_h2f_simd(int32_t) __asm__(
    "stax_h2f_one");
__attribute__((simd("notinbranch"), const, nothrow)) int32_t stax_f2h_simd(float) __asm__(
    "stax_f2h_one");
// One vector of N floats and the int32, uint32, uint16 and short vectors of its lanes.
#define STAX_LANES(N)                                                                          \
    struct stax_lanes##N {                                                                     \
        static constexpr int n = N;                                                            \
        typedef float F __attribute__((vector_size(4 * N)));                                   \
        typedef int32_t I __attribute__((vector_size(4 * N)));                                 \
        typedef uint32_t U __attribute__((vector_size(4 * N)));                                \
        typedef uint16_t H __attribute__((vector_size(2 * N)));                                \
        typedef short S __attribute__((vector_size(2 * N))); /* the builtins' type */          \
        typedef long long Q __attribute__((vector_size(4 * N)));                               \
    };
STAX_LANES(4) STAX_LANES(8) STAX_LANES(16)
#undef STAX_LANES
template <typename L> static inline bool stax_any_nan(typename L::F f) {  // a compare, a test
    const auto m = (typename L::Q)(f != f);
    if constexpr (L::n == 16) return __builtin_ia32_cmpps512_mask(f, f, 3, (uint16_t)-1, 4) != 0;
    else if constexpr (L::n == 8) return !__builtin_ia32_ptestz256(m, m);
    else return !__builtin_ia32_ptestz128(m, m);
}
template <typename L> static inline typename L::F stax_h2f_lanes(typename L::I h) {
    typename L::F f;
    if constexpr (L::n == 16)
        f = __builtin_ia32_vcvtph2ps512_mask(
            __builtin_ia32_pmovdw512_mask(h, typename L::S{}, (uint16_t)-1), typename L::F{},
            (uint16_t)-1, 4);
    else if constexpr (L::n == 8)
        f = __builtin_ia32_vcvtph2ps256(__builtin_convertvector(h, typename L::S));
    else {  // the instruction's low 4 lanes
        const auto bits = __builtin_convertvector(h, typename L::S);
        f = __builtin_ia32_vcvtph2ps(__builtin_shufflevector(bits, bits, 0, 1, 2, 3, 0, 1, 2, 3));
    }
    if (__builtin_expect(stax_any_nan<L>(f), 0))  // a NaN: keep a signaling one's bits
        for (int l = 0; l < L::n; l++) f[l] = stax_h2f((uint16_t)h[l]);
    return f;
}
template <typename L> static inline typename L::I stax_f2h_lanes(typename L::F f) {
    typename L::I h;  // 0: round to nearest even
    if constexpr (L::n == 16)
        h = __builtin_ia32_pmovzxwd512_mask(
            __builtin_ia32_vcvtps2ph512_mask(f, 0, typename L::S{}, (uint16_t)-1),
            typename L::I{}, (uint16_t)-1);
    else if constexpr (L::n == 8)
        h = __builtin_convertvector((typename L::H)__builtin_ia32_vcvtps2ph256(f, 0),
                                    typename L::I);
    else {
        const auto low = (typename L::H)__builtin_shufflevector(
            __builtin_ia32_vcvtps2ph(f, 0), __builtin_ia32_vcvtps2ph(f, 0), 0, 1, 2, 3);
        h = __builtin_convertvector(low, typename L::I);
    }
    if (__builtin_expect(stax_any_nan<L>(f), 0))  // a NaN: keep a signaling one's bits
        for (int l = 0; l < L::n; l++) h[l] = stax_f2h(f[l]);
    return h;
}
// the variants g++ calls: 16 lanes (AVX-512), 8 (AVX2), and 4 (SSE and AVX names) in loops
// whose vectors hold 4 doubles
STAX_HIDDEN stax_lanes4::F _ZGVbN4v_stax_h2f_one(stax_lanes4::I h) { return stax_h2f_lanes<stax_lanes4>(h); }
STAX_HIDDEN stax_lanes4::I _ZGVbN4v_stax_f2h_one(stax_lanes4::F f) { return stax_f2h_lanes<stax_lanes4>(f); }
STAX_HIDDEN stax_lanes4::I _ZGVcN4v_stax_f2h_one(stax_lanes4::F f) { return stax_f2h_lanes<stax_lanes4>(f); }
STAX_HIDDEN stax_lanes8::F _ZGVdN8v_stax_h2f_one(stax_lanes8::I h) { return stax_h2f_lanes<stax_lanes8>(h); }
STAX_HIDDEN stax_lanes8::I _ZGVdN8v_stax_f2h_one(stax_lanes8::F f) { return stax_f2h_lanes<stax_lanes8>(f); }
#if defined(__AVX512F__)
STAX_HIDDEN stax_lanes16::F _ZGVeN16v_stax_h2f_one(stax_lanes16::I h) {
    return stax_h2f_lanes<stax_lanes16>(h);
}
STAX_HIDDEN stax_lanes16::I _ZGVeN16v_stax_f2h_one(stax_lanes16::F f) {
    return stax_f2h_lanes<stax_lanes16>(f);
}
#endif
#undef STAX_HIDDEN
#else
static inline float stax_h2f_simd(int32_t h) { return stax_h2f((uint16_t)h); }
static inline int32_t stax_f2h_simd(float f) { return stax_f2h(f); }
#endif
static inline double stax_h2d(uint16_t h) {  // a signaling NaN stays one, as in NumPy
    const uint64_t nan = (uint64_t)(h & 0x8000u) << 48 | 0x7ff0000000000000ull |
                         (uint64_t)(h & 0x3ffu) << 42;
    const float f = stax_h2f_simd(h);
    return f != f ? __builtin_bit_cast(double, nan) : (double)f;
}
struct stax_half {
    uint16_t bits;
    stax_half() = default;
    // a constant is converted by the inline code, which g++ folds (a simd variant is a call)
    template <typename T> stax_half(T v)
        : bits(std::is_same_v<T, double> ? stax_d2h((double)v)
               : __builtin_constant_p((float)v) ? stax_f2h((float)v) : stax_f2h_simd((float)v)) {}
    // copies as 16-bit loads and stores (g++ does not vectorize an aggregate copy: "more than
    // one data ref in stmt")
    stax_half(const stax_half& o) : bits(o.bits) {}
    stax_half& operator=(const stax_half& o) { bits = o.bits; return *this; }
    operator float() const {
        return __builtin_constant_p(bits) ? stax_h2f(bits) : stax_h2f_simd(bits);
    }
    static stax_half of_bits(uint16_t b) {
        stax_half h;
        h.bits = b;
        return h;
    }
    // c ? a : b of the bits, by masks: g++ sinks a converting call into the branch of a ?:
    // (it is used there only) and leaves the loop scalar ("control flow in loop") [F16X]
    static stax_half where(bool c, stax_half a, stax_half b) {
        return of_bits((uint16_t)(b.bits ^ ((a.bits ^ b.bits) & -(int)c)));
    }
};
// [CHOOSE] NumPy's npy_half_nextafter on the bits (its float16 loop): NaN is the default NaN,
// equal values (0.0 and -0.0 too) give x, zero steps to the smallest subnormal toward y
static inline stax_half stax_half_nextafter(stax_half x, stax_half y) {
    const uint16_t a = x.bits, b = y.bits;
    if ((a & 0x7fffu) > 0x7c00u || (b & 0x7fffu) > 0x7c00u) return stax_half::of_bits(0x7e00u);
    if (a == b || ((a | b) & 0x7fffu) == 0) return x;
    if ((a & 0x7fffu) == 0) return stax_half::of_bits((uint16_t)((b & 0x8000u) + 1));
    const bool away = (a & 0x8000u) ? ((b & 0x8000u) && (a & 0x7fffu) < (b & 0x7fffu))
                                     : (int16_t)a < (int16_t)b;
    return stax_half::of_bits((uint16_t)(away ? a + 1 : a - 1));
}
template <> struct std::numeric_limits<stax_half> : std::numeric_limits<float> {
    static stax_half infinity() { return stax_half(std::numeric_limits<float>::infinity()); }
    static stax_half quiet_NaN() { return stax_half(std::numeric_limits<float>::quiet_NaN()); }
    static stax_half max() { return stax_half(65504.0f); }
    static stax_half lowest() { return stax_half(-65504.0f); }
};

// Error flags set by kernels; the Python wrapper turns them into NumPy's warnings/errors.
// STAX_FLAG_ENUM: `enum StaxFlag`, generated from stax.ops.FLAGS by stax.backends.cpu.cpp [A1]

// Kernels never branch on an error: each check ORs its bit (1 << StaxFlag) into `bad`, the
// thread-private `int stax_bad` declared at the top of each region (an `omp simd reduction(|:)`
// variable in vector loops); the region raises the flags it collected once, at its end. A
// branch or an atomic store inside a loop would leave the loop scalar. [B, issue 9]
static inline void stax_raise(int32_t* flags, int bad) {
    for (int which = 0; which < STAX_ANY_FLAG; which += 1)
        if (bad & (1 << which)) __atomic_store_n(&flags[which], 1, __ATOMIC_RELAXED);
    __atomic_fetch_or(&flags[STAX_ANY_FLAG], 1, __ATOMIC_RELAXED);  // keeps stax_interrupt_bit
}

// Ctrl-C (issue 8 item 10) [A8]: while a kernel runs armed (stax/runtime/fastcall.c), a SIGINT
// ORs stax_interrupt_bit into flags[STAX_ANY_FLAG]. Kernels poll it between chunks of their outer
// loop and skip the chunks left (`continue`, never a `break` out of an `omp for`: every thread
// of the team reaches the loop's end and its barrier); the caller raises KeyboardInterrupt.
static constexpr int32_t stax_interrupt_bit = 1 << 30;  // the same bit in fastcall.c
static inline bool stax_interrupted(const int32_t* flags) {
    return __builtin_expect(
        (__atomic_load_n(&flags[STAX_ANY_FLAG], __ATOMIC_RELAXED) & stax_interrupt_bit) != 0, 0);
}
// Elements per chunk of a loop strip-mined for the poll: 8 chunks per thread or more (balance),
// a multiple of 64 (vector-aligned chunks), 1024..65536 (a poll well within 0.1 s).
static inline constexpr int64_t stax_poll_step(int64_t n, int64_t threads) {
    const int64_t share = (n + 8 * threads - 1) / (8 * threads);
    return share < 1024 ? 1024 : share > 65536 ? 65536 : (share + 63) / 64 * 64;
}
static inline int stax_bit(bool failed, int which) { return (int)failed << which; }

// Floor quotient and remainder of integers, d != 0, without branches. Operands of 32 bits or
// fewer divide in double, which x86 vectorizes (it has no vector integer division): the result
// is exact, since the rounding error |a/d| * 2^-53 stays below 1/|d|, the least distance from a
// non-integral a/d to an integer. INT_MIN // -1 wraps to INT_MIN, as NumPy's.
// ConstD: the divisor is a constant, which g++ turns into a multiply and shifts.
template <typename T, bool ConstD> static inline T stax_floor_quotient(T a, T d) {
    if constexpr (sizeof(T) <= 4 && !ConstD) {  // floor by compare: g++ keeps floor(a/d) scalar
        const double qd = (double)a / (double)d;
        const int64_t q = (int64_t)qd;
        return (T)(q - (int64_t)(qd < (double)q));
    } else if constexpr (std::is_signed_v<T>) {
        const T e = d == -1 ? (T)1 : d;  // MIN / -1 traps: negate (wrapping) instead
        const T q = a / e;
        const T fq = q - (T)((a % e != 0) & ((a < 0) != (e < 0)));
        return d == -1 ? (T)(0 - (std::make_unsigned_t<T>)a) : fq;
    } else {
        return a / d;
    }
}

// [PERF9] C's fmod without glibc's call where the quotient is below 2^52 (NumPy's mod of floats
// calls fmod: 30-60 ns an element here). In double, q = trunc(a/b) is exact or one too large in
// magnitude (a/b rounded up to an integer); a - q*b is a multiple of the operands' least unit
// below |b| in magnitude, so one fma gives it exactly, and adding b back after an overshoot
// (a result of the other sign) is exact too. Larger quotients, b = 0, inf and NaN call fmod.
// A normal, finite power of two (folded where b is a constant).
template <typename T> static inline bool stax_power_of_two(T b) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    constexpr int bits = std::numeric_limits<T>::digits - 1;
    const U u = __builtin_bit_cast(U, std::fabs(b)), e = u >> bits;
    return (u & ((U(1) << bits) - 1)) == 0 && e != 0 && e != (U(1) << (sizeof(T) * 8 - 1 - bits)) - 1;
}
// ConstD: b is a constant. A power of two (x % 1.0) needs no fallback: a/b and trunc(a/b)*b are
// exact, and from 2^digits * |b| up a finite a is a multiple of b; no call, so it vectorizes.
template <typename T, bool ConstD = false> static inline T stax_fmod(T a, T b) {
    if constexpr (ConstD) {
        if (stax_power_of_two(b)) {
            const T top = std::ldexp(std::fabs(b), std::numeric_limits<T>::digits);
            const T r = std::fabs(a) >= top && std::isfinite(a) ? (T)0 : a - std::trunc(a / b) * b;
            return r == 0 ? std::copysign((T)0, a) : r;
        }
    }
    const double q = std::trunc((double)a / (double)b);
    if (__builtin_expect(!(std::fabs(q) < 0x1p52) || std::isinf(b), 0)) return std::fmod(a, b);
    const double r = std::fma(-q, (double)b, (double)a);
    if (r == 0) return std::copysign((T)0, a);
    return (T)(std::signbit(r) != std::signbit(a) ? r + std::copysign((double)b, (double)a) : r);
}

template <typename T, bool ConstD = false> static inline T stax_floordiv(T a, T b, int& bad) {
    if constexpr (std::is_same_v<T, bool>) {
        bad |= stax_bit(!b, STAX_DIV_ZERO_FLOOR_DIVIDE);
        return a && b;
    } else if constexpr (std::is_integral_v<T>) {
        // masks, not selects: a select on a value from an FP division becomes a branch
        bad |= stax_bit(b == 0, STAX_DIV_ZERO_FLOOR_DIVIDE);
        const T q = stax_floor_quotient<T, ConstD>(a, (T)(b + (T)(b == 0)));
        return (T)(q & (T)-(T)(b != 0));
    } else {
        if (b == 0) return a / b;  // inf or nan, as NumPy
        T m = stax_fmod<T, ConstD>(a, b);
        T div = (a - m) / b;
        if (m != 0 && ((b < 0) != (m < 0))) div -= 1;
        if (div == 0) return std::copysign((T)0, a / b);
        T floordiv = std::floor(div);
        if (div - floordiv > (T)0.5) floordiv += 1;
        return floordiv;
    }
}

template <typename T, bool ConstD = false> static inline T stax_remainder(T a, T b, int& bad) {
    if constexpr (std::is_same_v<T, bool>) {
        bad |= stax_bit(!b, STAX_DIV_ZERO_REMAINDER);
        return false;
    } else if constexpr (std::is_integral_v<T>) {
        bad |= stax_bit(b == 0, STAX_DIV_ZERO_REMAINDER);
        const T d = (T)(b + (T)(b == 0));
        using U = std::make_unsigned_t<T>;
        const T r = (T)((U)a - (U)stax_floor_quotient<T, ConstD>(a, d) * (U)d);  // sign of d
        return (T)(r & (T)-(T)(b != 0));
    } else {
        if (b == 0) return std::fmod(a, b);  // nan
        T m = stax_fmod<T, ConstD>(a, b);
        if (m != 0) {
            if ((b < 0) != (m < 0)) m += b;
        } else {
            m = std::copysign((T)0, b);
        }
        return m;
    }
}

// [FUZZ4] C's pow(a, 0.5): +inf for -inf and +0 for -0. g++'s vectorizer turns pow(a, 0.5) into
// sqrt(a), which gives nan and -0 there (NumPy's float16 power and float_power use pow).
template <typename T> static inline T stax_pow_half(T a) {
    return a == -std::numeric_limits<T>::infinity() ? -a : std::sqrt(a) + (T)0;
}

template <typename T> static inline T stax_power(T a, T b, int& bad) {
    if constexpr (std::is_floating_point_v<T>) {
        return std::pow(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
        return b ? a : true;
    } else {
        bad |= stax_bit(b < 0, STAX_NEGATIVE_INT_POWER);
        using U = std::make_unsigned_t<T>;
        U base = (U)a, result = 1;
        for (T e = b < 0 ? (T)0 : b; e; e >>= 1) {
            if (e & 1) result *= base;
            base *= base;
        }
        return b < 0 ? (T)0 : (T)result;
    }
}

// Integer index arithmetic helpers (floor semantics for possibly negative operands).
static inline int64_t stax_idx_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return ((a % b != 0) && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t stax_idx_mod(int64_t a, int64_t b) {
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline int64_t stax_wrap_index(int64_t i, int64_t n, int& bad) {
    const int64_t j = i < 0 ? i + n : i;
    const bool ok = (j >= 0) & (j < n);
    bad |= stax_bit(!ok, STAX_INDEX_OUT_OF_BOUNDS);
    return ok ? j : 0;  // an address inside the array, so the load stays safe
}

// [G9] exp of arguments whose result is exactly 0 or inf answered by a select, with an argument
// on libmvec's fast path: libmvec's exp takes a per-lane scalar path for every vector holding a
// lane with |x| beyond ~87 (float) / ~708 (double), which the -1e9 of a masked softmax hits in
// nearly every vector (measured 12x slower). Thresholds: e^x rounds to 0 below ln(2^-150)
// (float) / ln(2^-1075) (double) and to inf above ln of the largest finite plus half an ulp.
template <typename F, typename U>
static inline F stax_zero_if(F x, bool c) {  // bits masked: g++ moves a select across a call
    // (and a call into the branch that uses it), leaving the raw argument or a scalar loop
    U bits;
    std::memcpy(&bits, &x, sizeof(F));
    bits &= (U)0 - (U)!c;
    std::memcpy(&x, &bits, sizeof(F));
    return x;
}
// [GEN] a / d where d is the run-time size n as T (a mean's count): a product by 1/d when n
// is a power of two (or 0), exact and equal to a / d, as g++ compiles a constant divisor.
template <typename T> static inline T stax_div_size(T a, T d, int64_t n) {
    return (n & (n - 1)) == 0 ? a * ((T)1 / d) : a / d;
}

static inline float stax_expf(float x) {
    const bool zero = x < -103.98f, inf = x > 88.7229f;
    const float r = expf(stax_zero_if<float, uint32_t>(x, zero | inf));
    return stax_zero_if<float, uint32_t>(r, zero | inf) +
           (inf ? std::numeric_limits<float>::infinity() : 0.0f);
}
static inline double stax_exp(double x) {
    const bool zero = x < -745.14, inf = x > 709.79;
    const double r = exp(stax_zero_if<double, uint64_t>(x, zero | inf));
    return stax_zero_if<double, uint64_t>(r, zero | inf) +
           (inf ? std::numeric_limits<double>::infinity() : 0.0);
}

// [FORD] 4x4 transpose of 8-byte elements in registers (row tiles of float64 operands), as
// stax_transpose8x8_4: row k of `src` (at src + k*ss) becomes column k of `dst`.
static inline void stax_transpose4x4_8(const void* src, int64_t ss, void* dst, int64_t ds) {
    typedef uint64_t v4 __attribute__((vector_size(32)));
    typedef int64_t m4 __attribute__((vector_size(32)));
    const uint64_t* s = static_cast<const uint64_t*>(src);
    uint64_t* d = static_cast<uint64_t*>(dst);
    v4 r[4];
    for (int k = 0; k < 4; k++) std::memcpy(&r[k], s + k * ss, sizeof(v4));
    const m4 lo{0, 4, 2, 6}, hi{1, 5, 3, 7}, lo2{0, 1, 4, 5}, hi2{2, 3, 6, 7};
    const v4 t0 = __builtin_shuffle(r[0], r[1], lo), t1 = __builtin_shuffle(r[0], r[1], hi);
    const v4 t2 = __builtin_shuffle(r[2], r[3], lo), t3 = __builtin_shuffle(r[2], r[3], hi);
    const v4 u[4] = {__builtin_shuffle(t0, t2, lo2), __builtin_shuffle(t1, t3, lo2),
                     __builtin_shuffle(t0, t2, hi2), __builtin_shuffle(t1, t3, hi2)};
    for (int k = 0; k < 4; k++) std::memcpy(d + k * ds, &u[k], sizeof(v4));
}

// [G9] 8x8 transpose of 4-byte elements in registers (the tile copy of a transposed operand):
// row k of `src` (at src + k*ss) becomes column k of `dst` (dst + j*ds + k). GCC vector
// extensions: shuffles on AVX/AVX-512, generic code at the scalar ISA level.
static inline void stax_transpose8x8_4(const void* src, int64_t ss, void* dst, int64_t ds) {
    typedef uint32_t v8 __attribute__((vector_size(32)));
    typedef int32_t m8 __attribute__((vector_size(32)));
    const uint32_t* s = static_cast<const uint32_t*>(src);
    uint32_t* d = static_cast<uint32_t*>(dst);
    v8 r[8], t[8], u[8];
    for (int k = 0; k < 8; k++) std::memcpy(&r[k], s + k * ss, sizeof(v8));
    const m8 lo{0, 8, 1, 9, 4, 12, 5, 13}, hi{2, 10, 3, 11, 6, 14, 7, 15};
    const m8 lo2{0, 1, 8, 9, 4, 5, 12, 13}, hi2{2, 3, 10, 11, 6, 7, 14, 15};
    const m8 lo4{0, 1, 2, 3, 8, 9, 10, 11}, hi4{4, 5, 6, 7, 12, 13, 14, 15};
    for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shuffle(r[k], r[k + 1], lo);
        t[k + 1] = __builtin_shuffle(r[k], r[k + 1], hi);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = __builtin_shuffle(t[k], t[k + 2], lo2);
        u[k + 1] = __builtin_shuffle(t[k], t[k + 2], hi2);
        u[k + 2] = __builtin_shuffle(t[k + 1], t[k + 3], lo2);
        u[k + 3] = __builtin_shuffle(t[k + 1], t[k + 3], hi2);
    }
    for (int k = 0; k < 4; k++) {
        const v8 a = __builtin_shuffle(u[k], u[k + 4], lo4), b = __builtin_shuffle(u[k], u[k + 4], hi4);
        std::memcpy(d + k * ds, &a, sizeof(v8));
        std::memcpy(d + (k + 4) * ds, &b, sizeof(v8));
    }
}

// [CLIFF, ROWS] argmax/argmin of p[0, n) (positions base + i), merged into the result so far
// (best, idx; idx < 0: none yet) of the elements before them: NumPy's rule (the first NaN wins
// over everything, else the best value at its first position). Two passes per chunk of 2 KiB
// (the second reads it from L1): the chunk's best value in four vector accumulators (max/min
// only, no positions), with a NaN test per pair of vectors; then, only when the chunk beats the
// result so far, its first position holding that value, four vectors a test (-0.0 == 0.0: the
// first zero of either sign, as NumPy). Random rows search a later chunk less and less often
// (chunk k beats the earlier ones with probability 1/k). A NaN in a chunk: a scalar pass from
// the chunk's start finds the first one. Lanes start from the type's extreme, which no element
// exceeds: the chunk's best is one of its elements. T: a 4- or 8-byte number (narrower values
// are widened by the caller). Before ROWS: (value, step) pairs per lane, combined at the end;
// chunks of 2 KiB beat 8 KiB (one search per row of 1024) by 20% on rows in cache; rows from
// L3 (16 MB: 2048x2048 float32) run 1.27-1.43x NumPy with a prefetch 512 bytes ahead (CLIFF's
// kernel gained from it), 1.05-1.10x without. Numbers: RESULTS.md, fourteenth wave (ROWS).
#if defined(__AVX512F__)
static constexpr int stax_vec_bytes = 64;
#elif defined(__AVX__)
static constexpr int stax_vec_bytes = 32;
#else
static constexpr int stax_vec_bytes = 16;
#endif
// The lanes where a or b is NaN: an AVX-512 mask (one compare, no vector of flags to build)
// or a vector of flags.
template <typename T, typename V> static inline auto stax_unordered(V a, V b) {
#if defined(__AVX512F__)
    if constexpr (sizeof(V) == 64 && std::is_same_v<T, float>)
        return (uint64_t)__builtin_ia32_cmpps512_mask(a, b, 3, (uint16_t)-1, 4);
    else if constexpr (sizeof(V) == 64 && std::is_same_v<T, double>)
        return (uint64_t)__builtin_ia32_cmppd512_mask(a, b, 3, (uint8_t)-1, 4);
    else
#endif
    return (a != a) | (b != b);
}
template <typename M> static inline bool stax_any(M m) {
    if constexpr (std::is_integral_v<M>) return m != 0;
    else {
        bool any = false;
        for (size_t l = 0; l < sizeof(M) / sizeof(m[0]); l++) any |= m[l] != 0;
        return any;
    }
}
// The lanes where a == b (ordered: never a NaN) as bits, lane l at bit l: an AVX-512 mask
// compare, else a vector compare and a sign-bit mask (movmsk).
template <typename T, typename V> static inline uint64_t stax_eq_bits(V a, V b) {
#if defined(__AVX512F__)
    if constexpr (sizeof(V) == 64) {
        typedef int32_t I4 __attribute__((vector_size(64)));
        typedef long long I8 __attribute__((vector_size(64)));
        if constexpr (std::is_same_v<T, float>)
            return __builtin_ia32_cmpps512_mask(a, b, 0, (uint16_t)-1, 4);
        else if constexpr (std::is_same_v<T, double>)
            return __builtin_ia32_cmppd512_mask(a, b, 0, (uint8_t)-1, 4);
        else if constexpr (sizeof(T) == 4)
            return __builtin_ia32_pcmpeqd512_mask((I4)a, (I4)b, (uint16_t)-1);
        else return __builtin_ia32_pcmpeqq512_mask((I8)a, (I8)b, (uint8_t)-1);
    } else
#endif
    {
        typedef float F4x4 __attribute__((vector_size(16)));
        typedef double F8x2 __attribute__((vector_size(16)));
        const auto m = a == b;  // lanes of all ones or zeros
#if defined(__AVX__)
        typedef float F4x8 __attribute__((vector_size(32)));
        typedef double F8x4 __attribute__((vector_size(32)));
        if constexpr (sizeof(T) == 4 && sizeof(V) == 32) return __builtin_ia32_movmskps256((F4x8)m);
        else if constexpr (sizeof(V) == 32) return __builtin_ia32_movmskpd256((F8x4)m);
        else
#endif
        if constexpr (sizeof(T) == 4) return __builtin_ia32_movmskps((F4x4)m);
        else return __builtin_ia32_movmskpd((F8x2)m);
    }
}
// v's lanes moved down by h (lane l takes lane l + h, wrapping): constant shuffles, one per h.
template <typename V, size_t... L>
static inline V stax_rotate(V v, int h, std::index_sequence<L...>) {
    constexpr int W = sizeof...(L);
    switch (h) {
    case 1: return __builtin_shufflevector(v, v, (L + 1) % W...);
    case 2: return __builtin_shufflevector(v, v, (L + 2) % W...);
    case 4: return __builtin_shufflevector(v, v, (L + 4) % W...);
    default: return __builtin_shufflevector(v, v, (L + 8) % W...);
    }
}
template <typename T, bool Max>
static inline void stax_arg_block(const T* __restrict__ p, int64_t n, int64_t base, T& best,
                                  int64_t& idx) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "widen narrow values first");
    if (idx >= 0 && best != best) return;  // a NaN so far: it stays the result
    typedef T V __attribute__((vector_size(stax_vec_bytes)));
    constexpr int W = stax_vec_bytes / sizeof(T);
    constexpr int64_t chunk = 2048 / sizeof(T);
    // the least (greatest) value of T, infinities included [REVIEW]
    using L = std::numeric_limits<T>;
    const T extreme = L::has_infinity ? (Max ? -L::infinity() : L::infinity())
                                      : (Max ? L::lowest() : L::max());
    const auto better = [](T a, T b) { return Max ? a > b : a < b; };
    const auto pick = [](V a, V b) -> V { return (Max ? a > b : a < b) ? a : b; };
    const auto load = [p](int64_t at) { V v; std::memcpy(&v, p + at, sizeof(V)); return v; };
    constexpr auto lanes = std::make_index_sequence<W>{};
    T m = extreme;
    int64_t pos = -1, i = 0;
    while (n - i >= W) {
        const int64_t end = i + ((n - i < chunk ? n - i : chunk) & ~(int64_t)(W - 1));
        V b[4];
        for (int k = 0; k < 4; k++) b[k] = V{} + extreme;
        decltype(stax_unordered<T>(V{}, V{})) unordered = {};
        int64_t j = i;
        for (; j + 4 * W <= end; j += 4 * W) {  // no software prefetch (above)
            const V u[4] = {load(j), load(j + W), load(j + 2 * W), load(j + 3 * W)};
            if constexpr (std::is_floating_point_v<T>)
                unordered |= stax_unordered<T>(u[0], u[1]) | stax_unordered<T>(u[2], u[3]);
            for (int k = 0; k < 4; k++) b[k] = pick(u[k], b[k]);
        }
        for (; j < end; j += W) {
            const V u = load(j);
            if constexpr (std::is_floating_point_v<T>) unordered |= stax_unordered<T>(u, u);
            b[0] = pick(u, b[0]);
        }
        if (stax_any(unordered)) break;  // a NaN: the scalar pass below finds the first one
        V top = pick(pick(b[0], b[1]), pick(b[2], b[3]));
        for (int h = W / 2; h > 0; h /= 2) top = pick(top, stax_rotate(top, h, lanes));
        if (pos < 0 || better(top[0], m)) {  // the chunk's first position of its best value
            m = top[0];
            const V want = V{} + m;
            const auto equal = [&](int64_t at) { return stax_eq_bits<T>(load(at), want); };
            uint64_t at = 0;  // four vectors a test: lane l of vector k at bit k * W + l
            for (j = i; j + 4 * W <= end; j += 4 * W) {
                at = equal(j) | equal(j + W) << W | equal(j + 2 * W) << 2 * W
                     | equal(j + 3 * W) << 3 * W;
                if (at) break;
            }
            if (!at)
                for (; j < end; j += W)
                    if ((at = equal(j))) break;
            if (at) pos = j + __builtin_ctzll(at);
        }
        i = end;
    }
    for (; i < n; i++) {
        const T v = p[i];
        if (v != v) { best = v; idx = base + i; return; }
        if (pos < 0 || better(v, m)) { m = v; pos = i; }
    }
    if (pos >= 0 && (idx < 0 || better(m, best))) { best = m; idx = base + pos; }
}

// ---- complex64 / complex128 [E16, issue 16] ----------------------------------------------
// NumPy's complex numbers: (re, im) laid out as NumPy stores them. Arithmetic is NumPy's own
// (its umath loops and npy_math): the plain product (no C99 Annex G recovery of inf from nan),
// Smith's division, lexicographic order (maximum, <); exp/log/sqrt/trigonometric functions
// call glibc's cexp/clog/csqrt/... (C99 complex), which NumPy calls on Linux; exp2,
// expm1, log2, log10, log1p and small integer powers are NumPy's formulas. A struct, not
// std::complex: std::complex's * and / call __muldc3/__divdc3 (C99 Annex G: other results
// than NumPy's for inf/nan, and a library call per element that keeps loops scalar).
template <typename T> struct stax_complex {
    T re, im;
    stax_complex() = default;
    // copies part by part: an aggregate copy into an `omp simd` private keeps the loop scalar
    constexpr stax_complex(const stax_complex& z) : re(z.re), im(z.im) {}
    stax_complex& operator=(const stax_complex& z) {
        re = z.re;
        im = z.im;
        return *this;
    }
    constexpr stax_complex(T r, T i) : re(r), im(i) {}
    template <typename U, typename = std::enable_if_t<std::is_arithmetic_v<U>>>
    constexpr stax_complex(U r) : re((T)r), im((T)0) {}  // a real value: imaginary part 0
    template <typename U> explicit constexpr stax_complex(stax_complex<U> z)
        : re((T)z.re), im((T)z.im) {}
    explicit constexpr operator bool() const { return (re != 0) | (im != 0); }  // nonzero
    friend stax_complex operator+(stax_complex a, stax_complex b) {
        return {a.re + b.re, a.im + b.im};
    }
    friend stax_complex operator-(stax_complex a, stax_complex b) {
        return {a.re - b.re, a.im - b.im};
    }
    friend stax_complex operator-(stax_complex a) { return {-a.re, -a.im}; }
    friend stax_complex operator*(stax_complex a, stax_complex b) {
        return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    }
    friend stax_complex operator/(stax_complex a, stax_complex b) {  // NumPy: Smith's method
        // every division unconditional, then selects: the loop stays vectorizable
        const T abr = std::fabs(b.re), abi = std::fabs(b.im);
        const bool by_re = abr >= abi;
        const T num = by_re ? b.im : b.re, den = by_re ? b.re : b.im;
        const T rat = num / den;
        const T scl = (T)1 / (den + num * rat);
        const T re_by_re = (a.re + a.im * rat) * scl, re_by_im = (a.re * rat + a.im) * scl;
        const T im_by_re = (a.im - a.re * rat) * scl, im_by_im = (a.im * rat - a.re) * scl;
        const T re = by_re ? re_by_re : re_by_im, im = by_re ? im_by_re : im_by_im;
        const T zre = a.re / abr, zim = a.im / abi;
        const bool zero = (abr == 0) & (abi == 0);  // NumPy: a complex inf or nan
        return {zero ? zre : re, zero ? zim : im};
    }
    friend bool operator==(stax_complex a, stax_complex b) {
        return (a.re == b.re) & (a.im == b.im);
    }
    friend bool operator!=(stax_complex a, stax_complex b) {
        return (a.re != b.re) | (a.im != b.im);
    }
    // NumPy's CLT/CLE: by real part, then imaginary part; a NaN compares false
    friend bool operator<(stax_complex a, stax_complex b) {
        return ((a.re < b.re) & (a.im == a.im) & (b.im == b.im)) |
               ((a.re == b.re) & (a.im < b.im));
    }
    friend bool operator<=(stax_complex a, stax_complex b) {
        return ((a.re < b.re) & (a.im == a.im) & (b.im == b.im)) |
               ((a.re == b.re) & (a.im <= b.im));
    }
    friend bool operator>(stax_complex a, stax_complex b) { return b < a; }
    friend bool operator>=(stax_complex a, stax_complex b) { return b <= a; }
};
typedef stax_complex<float> stax_complex64;
typedef stax_complex<double> stax_complex128;
template <typename T> constexpr bool stax_is_complex_v = false;
template <typename T> constexpr bool stax_is_complex_v<stax_complex<T>> = true;

template <typename T> static inline stax_complex<T> stax_cwhere(bool c, stax_complex<T> a,
                                                                stax_complex<T> b) {
    return {c ? a.re : b.re, c ? a.im : b.im};  // selects of parts (a struct ?: branches)
}
template <typename T> static inline T stax_cabs(stax_complex<T> z) {  // npy_cabs: hypot
    return std::hypot(z.re, z.im);
}
template <typename T> static inline bool stax_cisnan(stax_complex<T> z) {
    return std::isnan(z.re) | std::isnan(z.im);
}
template <typename T> static inline bool stax_cisinf(stax_complex<T> z) {
    return std::isinf(z.re) | std::isinf(z.im);
}
template <typename T> static inline bool stax_cisfinite(stax_complex<T> z) {
    return std::isfinite(z.re) & std::isfinite(z.im);
}
template <typename T> static inline stax_complex<T> stax_conj(stax_complex<T> z) {
    return {z.re, -z.im};
}
template <typename T> static inline stax_complex<T> stax_crint(stax_complex<T> z) {
    return {std::nearbyint(z.re), std::nearbyint(z.im)};
}
template <typename T> static inline stax_complex<T> stax_creciprocal(stax_complex<T> z) {
    const bool by_re = std::fabs(z.im) <= std::fabs(z.re);  // NumPy's C@TYPE@_reciprocal
    const T r = by_re ? z.im / z.re : z.re / z.im;
    const T d = by_re ? z.re + z.im * r : z.re * r + z.im;
    return by_re ? stax_complex<T>{(T)1 / d, -r / d} : stax_complex<T>{r / d, (T)-1 / d};
}
template <typename T> static inline stax_complex<T> stax_csign(stax_complex<T> z) {
    // NumPy 2: z / |z|; 0 at 0; an infinite part gives its unit (both infinite: nan)
    const T a = std::hypot(z.re, z.im);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    if (std::isnan(a)) return {nan, nan};
    if (std::isinf(a)) {
        if (std::isinf(z.re)) {
            if (std::isinf(z.im)) return {nan, nan};
            return {z.re > 0 ? (T)1 : (T)-1, (T)0};
        }
        return {(T)0, z.im > 0 ? (T)1 : (T)-1};
    }
    if (a == 0) return {(T)0, (T)0};
    return {z.re / a, z.im / a};
}
// np.maximum/np.minimum (a NaN part in the first operand, then the second, propagates) and
// np.fmax/np.fmin (a NaN is ignored), lexicographic as NumPy's complex loops
template <typename T> static inline stax_complex<T> stax_cmaximum(stax_complex<T> a,
                                                                  stax_complex<T> b) {
    return (std::isnan(a.re) | std::isnan(a.im) | (a >= b)) ? a : b;
}
template <typename T> static inline stax_complex<T> stax_cminimum(stax_complex<T> a,
                                                                  stax_complex<T> b) {
    return (std::isnan(a.re) | std::isnan(a.im) | (a <= b)) ? a : b;
}
template <typename T> static inline stax_complex<T> stax_cfmax(stax_complex<T> a,
                                                               stax_complex<T> b) {
    return (std::isnan(b.re) | std::isnan(b.im) | (a >= b)) ? a : b;
}
template <typename T> static inline stax_complex<T> stax_cfmin(stax_complex<T> a,
                                                               stax_complex<T> b) {
    return (std::isnan(b.re) | std::isnan(b.im) | (a <= b)) ? a : b;
}
// glibc's complex functions (cexp, clog, ...: what NumPy calls on Linux), declared here with
// g++'s __complex__ types: <complex> would double every kernel's compile time (0.4 -> 1.1 s)
static inline __complex__ float stax_to_c(stax_complex<float> z) {
    __complex__ float w;
    __real__ w = z.re;
    __imag__ w = z.im;
    return w;
}
static inline __complex__ double stax_to_c(stax_complex<double> z) {
    __complex__ double w;
    __real__ w = z.re;
    __imag__ w = z.im;
    return w;
}
static inline stax_complex<float> stax_from_c(__complex__ float w) {
    return {__real__ w, __imag__ w};
}
static inline stax_complex<double> stax_from_c(__complex__ double w) {
    return {__real__ w, __imag__ w};
}
#define STAX_CMATH(name) \
    extern "C" __complex__ float c##name##f(__complex__ float) noexcept; \
    extern "C" __complex__ double c##name(__complex__ double) noexcept; \
    static inline stax_complex<float> stax_c##name(stax_complex<float> z) { \
        return stax_from_c(c##name##f(stax_to_c(z))); \
    } \
    static inline stax_complex<double> stax_c##name(stax_complex<double> z) { \
        return stax_from_c(c##name(stax_to_c(z))); \
    }
STAX_CMATH(exp) STAX_CMATH(log) STAX_CMATH(sqrt) STAX_CMATH(sin) STAX_CMATH(cos) STAX_CMATH(tan)
STAX_CMATH(asin) STAX_CMATH(acos) STAX_CMATH(atan) STAX_CMATH(sinh) STAX_CMATH(cosh)
STAX_CMATH(tanh) STAX_CMATH(asinh) STAX_CMATH(acosh) STAX_CMATH(atanh)
#undef STAX_CMATH
extern "C" __complex__ float cpowf(__complex__ float, __complex__ float) noexcept;
extern "C" __complex__ double cpow(__complex__ double, __complex__ double) noexcept;
template <typename T> static inline stax_complex<T> stax_cexp2(stax_complex<T> z) {
    return stax_cexp(stax_complex<T>{z.re * (T)M_LN2, z.im * (T)M_LN2});  // nc_exp2
}
template <typename T> static inline stax_complex<T> stax_clog2(stax_complex<T> z) {
    const stax_complex<T> l = stax_clog(z);
    return {l.re * (T)M_LOG2E, l.im * (T)M_LOG2E};
}
template <typename T> static inline stax_complex<T> stax_clog10(stax_complex<T> z) {
    const stax_complex<T> l = stax_clog(z);
    return {l.re * (T)M_LOG10E, l.im * (T)M_LOG10E};
}
template <typename T> static inline stax_complex<T> stax_cexpm1(stax_complex<T> z) {
    const T a = std::sin(z.im / 2);  // nc_expm1
    return {std::expm1(z.re) * std::cos(z.im) - 2 * a * a, std::exp(z.re) * std::sin(z.im)};
}
template <typename T> static inline stax_complex<T> stax_clog1p(stax_complex<T> z) {
    const T l = std::hypot(z.re + 1, z.im);  // nc_log1p
    return {std::log(l), std::atan2(z.im, z.re + 1)};
}
template <typename T> static inline stax_complex<T> stax_cpow(stax_complex<T> a,
                                                              stax_complex<T> b) {
    // npy_cpow: b == 0 -> 1; a == 0 -> 0 or nan; integral b in (-100, 100) by products
    const T nan = std::numeric_limits<T>::quiet_NaN();
    if ((b.re == 0) & (b.im == 0)) return {(T)1, (T)0};
    if ((a.re == 0) & (a.im == 0)) return b.re > 0 ? stax_complex<T>{0, 0}
                                                   : stax_complex<T>{nan, nan};
    if ((b.im == 0) & (b.re > -100) & (b.re < 100) && (T)(int64_t)b.re == b.re) {
        int64_t n = (int64_t)b.re;
        if (n == 1) return a;
        if (n == 2) return a * a;
        if (n == 3) return a * (a * a);
        n = n < 0 ? -n : n;
        stax_complex<T> aa{(T)1, (T)0}, p = a;
        for (int64_t mask = 1;; mask <<= 1) {
            if (n & mask) aa = aa * p;
            if (n < (mask << 1)) break;
            p = p * p;
        }
        return b.re < 0 ? stax_complex<T>{(T)1, (T)0} / aa : aa;
    }
    if constexpr (std::is_same_v<T, float>) return stax_from_c(cpowf(stax_to_c(a), stax_to_c(b)));
    else return stax_from_c(cpow(stax_to_c(a), stax_to_c(b)));
}

template <typename To, typename From> static inline To stax_cast(From x, int& bad) {
    if constexpr (stax_is_complex_v<From> && !stax_is_complex_v<To>) {
        // [E16] NumPy: nonzero for bool, else the real part (a ComplexWarning, in Python)
        if constexpr (std::is_same_v<To, bool>) return (bool)x;
        else return stax_cast<To>(x.re, bad);
    } else if constexpr (std::is_same_v<To, bool>) {
        return x != 0;
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        // NumPy (x86) for nan/inf/out-of-range, with a warning; selects only, no UB. [A1]
        // 8/16-bit: through int32 (wrapping: 300.0 -> uint8 44, no warning), 0 outside int32.
        // int32/int64: the minimum integer outside the range.
        // uint32/uint64: also exact for [-2^(W-1), 0) (wrapping), else 0 above, 2^(W-1) below.
        using S = std::make_signed_t<To>;
        if constexpr (sizeof(To) <= 2) {
            const bool ok = (x >= (From)-2147483648.0) & (x < (From)2147483648.0);
            bad |= stax_bit(!ok, STAX_INVALID_CAST);
            return (To)(int32_t)(ok ? x : (From)0);
        } else if constexpr (std::is_signed_v<To>) {
            const From lo = (From)std::numeric_limits<To>::min();
            const bool ok = (x >= lo) & (x < -lo);
            bad |= stax_bit(!ok, STAX_INVALID_CAST);
            return (To)(ok ? x : lo);
        } else {
            const From half = -(From)std::numeric_limits<S>::min();  // 2^(W-1)
            const bool neg = (x >= -half) & (x < (From)0);
            const bool pos = (x >= (From)0) & (x < half + half);
            bad |= stax_bit(!(neg | pos), STAX_INVALID_CAST);
            const To wrapped = (To)(S)(neg ? x : (From)0);
            const To exact = (To)(pos ? x : (From)0);
            const To fallback = x > (From)0 ? (To)0 : (To)half;
            return neg ? wrapped : (pos ? exact : fallback);
        }
    } else if constexpr (std::is_same_v<From, bool> && std::is_floating_point_v<To>) {
        return x ? (To)1 : (To)0;  // g++ has no vector conversion of bool to float
    } else {
        return (To)x;
    }
}
// [VEC] A float the program clamped into To's range before the cast (np.clip, then astype):
// only NaN is out of range (NumPy's value for it, as stax_cast gives it). One NaN test: with
// stax_cast's range tests g++ specializes the clamp's constant paths (PRE) into selects of
// narrow values under wide masks, which it cannot vectorize.
template <typename To, typename From> static inline To stax_cast_clamped(From x, int& bad) {
    int unused = 0;
    const To nan_value = stax_cast<To, From>(std::numeric_limits<From>::quiet_NaN(), unused);
    const bool ok = x == x;
    bad |= stax_bit(!ok, STAX_INVALID_CAST);
    if constexpr (sizeof(To) <= 2) return ok ? (To)(int32_t)(ok ? x : (From)0) : nan_value;
    else return ok ? (To)(ok ? x : (From)0) : nan_value;
}

// Comparisons: NumPy compares a signed with an unsigned integer exactly (its uint64/int64
// loops); C++ would convert the signed one to unsigned. Other pairs: the plain operator. [A1]
template <typename A, typename B> constexpr bool stax_mixed_sign_v =
    std::is_integral_v<A> && std::is_integral_v<B> && !std::is_same_v<A, bool> &&
    !std::is_same_v<B, bool> && (std::is_signed_v<A> != std::is_signed_v<B>);
template <typename A, typename B> static inline bool stax_less(A a, B b) {
    if constexpr (stax_mixed_sign_v<A, B> && std::is_signed_v<A>)
        return (a < 0) | ((std::make_unsigned_t<A>)a < b);
    else if constexpr (stax_mixed_sign_v<A, B>)
        return (b >= 0) & (a < (std::make_unsigned_t<B>)b);
    else return a < b;
}
template <typename A, typename B> static inline bool stax_equal(A a, B b) {
    if constexpr (stax_mixed_sign_v<A, B> && std::is_signed_v<A>)
        return (a >= 0) & ((std::make_unsigned_t<A>)a == b);
    else if constexpr (stax_mixed_sign_v<A, B>)
        return (b >= 0) & (a == (std::make_unsigned_t<B>)b);
    else return a == b;
}
template <typename A, typename B> static inline bool stax_less_equal(A a, B b) {
    if constexpr (stax_mixed_sign_v<A, B>) return stax_less(a, b) | stax_equal(a, b);
    else return a <= b;
}

// np.reciprocal of integers: NumPy converts 1.0 / x to the integer type, so 1 -> 1, -1 -> -1,
// others -> 0, and 0 -> the int32/int64 minimum (0 for narrower and unsigned types) with
// "divide by zero" and "invalid value" warnings. Selects only: no division, no UB. [A1]
// (NumPy computes bool's reciprocal in int8.)
template <typename T> static inline T stax_reciprocal(T a, int& bad) {
    const bool zero = a == 0;
    bad |= stax_bit(zero, STAX_DIV_ZERO_RECIPROCAL) | stax_bit(zero, STAX_INVALID_RECIPROCAL);
    const T at_zero = (std::is_signed_v<T> && sizeof(T) >= 4) ? std::numeric_limits<T>::min()
                                                             : (T)0;
    const bool minus_one = std::is_signed_v<T> && a == (T)-1;
    return a == (T)1 ? (T)1 : (minus_one ? a : (zero ? at_zero : (T)0));
}

template <typename T> static inline T stax_abs(T a) {
    if constexpr (std::is_floating_point_v<T>) return std::fabs(a);
    else if constexpr (std::is_same_v<T, bool>) return a;
    else return a < 0 ? (T)(0 - (std::make_unsigned_t<T>)a) : a;
}
template <typename T> static inline T stax_neg(T a) {
    if constexpr (std::is_integral_v<T>) return (T)(0 - (std::make_unsigned_t<T>)a);
    else return -a;
}
template <typename T> static inline T stax_sign(T a) {  // selects only: no branch
    if constexpr (std::is_floating_point_v<T>)
        return a > 0 ? (T)1 : (a < 0 ? (T)-1 : (a == a ? (T)0 : a));
    else return (T)((a > 0) - (a < 0));
}
// NaN-propagating maximum/minimum (np.maximum/np.minimum) and NaN-ignoring fmax/fmin.
// NumPy's maximum/minimum: the first NaN, else the larger (smaller); of two equal values
// (-0.0 and 0.0) the second. Selects of values, not early returns: g++ folded the returns
// and a later isnan of the result into a select of bools, which it does not vectorize (the
// batch norm + ReLU + max pooling loop of a CNN stayed scalar). [TORCH2]
template <typename T> static inline T stax_maximum(T a, T b) {
    const T larger = a > b ? a : b;
    const T second = b != b ? b : larger;
    return a != a ? a : second;
}
template <typename T> static inline T stax_minimum(T a, T b) {
    const T smaller = a < b ? a : b;
    const T second = b != b ? b : smaller;
    return a != a ? a : second;
}
// NumPy's float16 loops (computed here as float): of two equal values (-0.0 and 0.0) the
// first; maximum/minimum a NaN first, fmax/fmin a NaN second ignored. [FUZZ]
static inline float stax_half_maximum(float a, float b) { return a >= b || a != a ? a : b; }
static inline float stax_half_minimum(float a, float b) { return a <= b || a != a ? a : b; }
static inline float stax_half_fmax(float a, float b) { return a >= b || b != b ? a : b; }
static inline float stax_half_fmin(float a, float b) { return a <= b || b != b ? a : b; }
// [REVIEW] floats: selects, not std::fmax, whose choice between -0.0 and 0.0 depended on the
// build (glibc's call at -O1 and the scalar ISA level kept the first, -O3's inline code the
// second): NumPy's float32/64 loops keep the second; a NaN is ignored (both NaN: NaN)
template <typename T> static inline T stax_fmax(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return b != b || a > b ? a : b;
    else return a >= b ? a : b;
}
template <typename T> static inline T stax_fmin(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return b != b || a < b ? a : b;
    else return a <= b ? a : b;
}
template <typename T> static inline T stax_shl(T a, T b) {
    using U = std::make_unsigned_t<T>;
    if (b < 0 || b >= (T)(8 * sizeof(T))) return 0;
    return (T)((U)a << b);
}
template <typename T> static inline T stax_shr(T a, T b) {
    if (b < 0 || b >= (T)(8 * sizeof(T))) return a < 0 ? (T)-1 : (T)0;
    return (T)(a >> b);
}
// [VEC4] np.gcd / np.lcm (integer loops only): NumPy's results are those of the absolute
// values as unsigned numbers (the minimum's is 2^(bits-1)), wrapped back to T: gcd(MIN, 0) and
// lcm(MIN, 3) are MIN. No signed overflow, no MIN % -1; lcm multiplies in 64 bits unsigned.
template <typename T> static inline std::make_unsigned_t<T> stax_uabs(T a) {
    using U = std::make_unsigned_t<T>;
    return a < 0 ? (U)(0 - (U)a) : (U)a;
}
template <typename T> static inline T stax_gcd(T a, T b) {
    auto x = stax_uabs(a), y = stax_uabs(b);
    while (y != 0) {
        auto r = (decltype(y))(x % y);
        x = y;
        y = r;
    }
    return (T)x;
}
template <typename T> static inline T stax_lcm(T a, T b) {
    auto g = stax_uabs(stax_gcd(a, b));
    if (g == 0) return (T)0;
    return (T)(std::make_unsigned_t<T>)((unsigned long long)(stax_uabs(a) / g) * stax_uabs(b));
}
template <typename T> static inline T stax_logaddexp(T a, T b) {
    if (a == b) return a + (T)M_LN2;
    T d = a - b;
    if (d > 0) return a + std::log1p(std::exp(-d));
    if (d <= 0) return b + std::log1p(std::exp(d));
    return d;  // nan
}
