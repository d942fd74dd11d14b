// Stax kernel runtime: scalar semantics that match NumPy, without undefined behaviour.
// Compiled with -fwrapv, so signed integer overflow wraps as in NumPy.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
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
}

// Error flags set by kernels; the Python wrapper turns them into NumPy's warnings/errors.
enum StaxFlag {
    STAX_DIV_ZERO_FLOOR_DIVIDE = 0,  // integer // by zero: result 0, RuntimeWarning
    STAX_DIV_ZERO_REMAINDER = 1,     // integer % by zero: result 0, RuntimeWarning
    STAX_INDEX_OUT_OF_BOUNDS = 2,    // gather index out of range: IndexError
    STAX_NEGATIVE_INT_POWER = 3,     // integer ** negative: ValueError
    STAX_INVALID_CAST = 4,           // float -> int of nan/inf/out of range: RuntimeWarning
    STAX_ANY_FLAG = 7                // set with every other flag: one check in the wrapper
};

static inline void stax_set_flag(int32_t* flags, int which) {
    __atomic_store_n(&flags[which], 1, __ATOMIC_RELAXED);
    __atomic_store_n(&flags[STAX_ANY_FLAG], 1, __ATOMIC_RELAXED);
}

template <typename T> static inline T stax_floordiv(T a, T b, int32_t* flags) {
    if constexpr (std::is_integral_v<T>) {
        if constexpr (std::is_same_v<T, bool>) {
            if (!b) { stax_set_flag(flags, STAX_DIV_ZERO_FLOOR_DIVIDE); return false; }
            return a;
        } else {
            if (b == 0) { stax_set_flag(flags, STAX_DIV_ZERO_FLOOR_DIVIDE); return 0; }
            if (b == -1) return (T)(0 - (std::make_unsigned_t<T>)a);  // MIN // -1 wraps
            T q = a / b;
            if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
            return q;
        }
    } else {
        if (b == 0) return a / b;  // inf or nan, as NumPy
        T m = std::fmod(a, b);
        T div = (a - m) / b;
        if (m != 0 && ((b < 0) != (m < 0))) div -= 1;
        if (div == 0) return std::copysign((T)0, a / b);
        T floordiv = std::floor(div);
        if (div - floordiv > (T)0.5) floordiv += 1;
        return floordiv;
    }
}

template <typename T> static inline T stax_remainder(T a, T b, int32_t* flags) {
    if constexpr (std::is_integral_v<T>) {
        if constexpr (std::is_same_v<T, bool>) {
            if (!b) stax_set_flag(flags, STAX_DIV_ZERO_REMAINDER);
            return false;
        } else {
            if (b == 0) { stax_set_flag(flags, STAX_DIV_ZERO_REMAINDER); return 0; }
            if (b == -1) return 0;
            T r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
            return r;
        }
    } else {
        if (b == 0) return std::fmod(a, b);  // nan
        T m = std::fmod(a, b);
        if (m != 0) {
            if ((b < 0) != (m < 0)) m += b;
        } else {
            m = std::copysign((T)0, b);
        }
        return m;
    }
}

template <typename T> static inline T stax_power(T a, T b, int32_t* flags) {
    if constexpr (std::is_floating_point_v<T>) {
        return std::pow(a, b);
    } else if constexpr (std::is_same_v<T, bool>) {
        return b ? a : true;
    } else {
        if (b < 0) { stax_set_flag(flags, STAX_NEGATIVE_INT_POWER); return 0; }
        using U = std::make_unsigned_t<T>;
        U base = (U)a, result = 1;
        while (b) { if (b & 1) result *= base; base *= base; b >>= 1; }
        return (T)result;
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
static inline int64_t stax_wrap_index(int64_t i, int64_t n, int32_t* flags) {
    if (i < 0) i += n;
    if (i < 0 || i >= n) { stax_set_flag(flags, STAX_INDEX_OUT_OF_BOUNDS); return 0; }
    return i;
}

template <typename To, typename From> static inline To stax_cast(From x, int32_t* flags) {
    if constexpr (std::is_same_v<To, bool>) {
        return x != 0;
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        // NumPy (x86) gives the minimum integer for nan/inf/out-of-range, with a warning.
        const From lo = (From)std::numeric_limits<To>::min();
        const From hi = -(From)std::numeric_limits<To>::min();
        if (!(x >= lo && x < hi)) {
            stax_set_flag(flags, STAX_INVALID_CAST);
            return std::numeric_limits<To>::min();
        }
        return (To)x;
    } else {
        return (To)x;
    }
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
template <typename T> static inline T stax_sign(T a) {
    if constexpr (std::is_floating_point_v<T>) return a != a ? a : (T)((a > 0) - (a < 0));
    else return (T)((a > 0) - (a < 0));
}
// NaN-propagating maximum/minimum (np.maximum/np.minimum) and NaN-ignoring fmax/fmin.
template <typename T> static inline T stax_maximum(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    return a >= b ? a : b;
}
template <typename T> static inline T stax_minimum(T a, T b) {
    if (a != a) return a;
    if (b != b) return b;
    return a <= b ? a : b;
}
template <typename T> static inline T stax_fmax(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return std::fmax(a, b);
    else return a >= b ? a : b;
}
template <typename T> static inline T stax_fmin(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return std::fmin(a, b);
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
template <typename T> static inline T stax_logaddexp(T a, T b) {
    if (a == b) return a + (T)M_LN2;
    T d = a - b;
    if (d > 0) return a + std::log1p(std::exp(-d));
    if (d <= 0) return b + std::log1p(std::exp(d));
    return d;  // nan
}
