#!/usr/bin/env python3
"""Independent reference for the normal transform of sdk/cpp/counter_rng.hpp (golden values pinned
in tests/sdk/counter_rng_test.cpp and tests/tensor/randn_test.cpp).

For each (seed, counter) it prints
  - the exact value sqrt(-2 ln u1) * cos|sin(2 pi u2) from the same integer uniforms, computed with
    mpmath at 50 digits and rounded to float32 / float64: what the transform approximates;
  - the bits the specified algorithm must produce, re-implemented here from the header's comments:
    float32 arithmetic emulated by rounding every double result to float32 (exact for +, -, *, /
    and sqrt, whose double results round once more without double-rounding error), float64
    arithmetic as Python floats (IEEE double, no fused operations).
Run: python3 tests/sdk/counter_rng_reference.py   (needs mpmath)
"""
import math
import struct

import mpmath as mp

mp.mp.dps = 50
M64 = (1 << 64) - 1
NORMAL_STREAM = 0x6E6F726D616C0000


def splitmix(seed, counter):
    z = (seed + 0x9E3779B97F4A7C15 * (counter + 1)) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def pair_uniforms(seed, counter, bits):
    key = seed ^ NORMAL_STREAM
    even = counter & ~1
    return splitmix(key, even) >> (64 - bits), splitmix(key, even + 1) >> (64 - bits)


def exact(seed, counter, bits):
    k1, k2 = pair_uniforms(seed, counter, bits)
    r = mp.sqrt(-2 * mp.log(mp.mpf(k1 + 1) / 2**bits))
    theta = 2 * mp.pi * mp.mpf(k2) / 2**bits
    return r * (mp.sin(theta) if counter & 1 else mp.cos(theta))


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def f32_bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def reduce_log(n, mant_bits, exp_bias, sqrt2_mantissa_bits):
    """n = 2^E m, m in [sqrt(1/2), sqrt(2)] folded as the header does (on the float's bits)."""
    m, e = math.frexp(n)  # n = m 2^e, m in [0.5, 1)
    m, e = m * 2, e - 1    # m in [1, 2)
    if m > sqrt2_mantissa_bits:
        m, e = m / 2, e + 1
    return m, e


def algorithm_f32(seed, counter):
    F = f32
    k1, k2 = pair_uniforms(seed, counter, 24)
    sqrt2_f = struct.unpack('<f', struct.pack('<I', 0x3FB504F3))[0]
    m, e = reduce_log(float(k1 + 1), 23, 127, sqrt2_f)
    e = float(e - 24)
    f = F(m - 1.0)
    s = F(f / F(m + 1.0))
    z = F(s * s)
    p = F(float.fromhex('0x1.55557ap-1') + F(z * F(float.fromhex('0x1.995e36p-2') + F(z * float.fromhex('0x1.31ee64p-2')))))
    ln_m = F(F(2.0 * s) + F(F(s * z) * p))
    ln_u = F(F(e * float.fromhex('0x1.62e4p-1')) + F(F(e * float.fromhex('0x1.7f7d1cp-20')) + ln_m))
    r = F(math.sqrt(F(-2.0 * ln_u)))
    quadrant = (k2 + (1 << 21)) >> 22
    t = F(float(k2 - (quadrant << 22)) * float.fromhex('0x1.921fb6p-22'))
    z = F(t * t)
    sp = F(float.fromhex('-0x1.555546p-3') + F(z * F(float.fromhex('0x1.110746p-7') + F(z * float.fromhex('-0x1.99477ap-13')))))
    st = F(t + F(F(t * z) * sp))
    cp = F(float.fromhex('0x1.55554ap-5') + F(z * F(float.fromhex('-0x1.6c0c6p-10') + F(z * float.fromhex('0x1.99f73p-16')))))
    ct = F(F(1.0 - F(0.5 * z)) + F(F(z * z) * cp))
    return F(r * trig(quadrant & 3, ct, st, counter & 1))


def trig(q, ct, st, want_sin):
    a, b = (st, ct) if q & 1 else (ct, st)
    c = -a if (q + 1) & 2 else a
    s = -b if q & 2 else b
    return s if want_sin else c


def horner(z, coefficients):
    acc = float.fromhex(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = float.fromhex(c) + z * acc
    return acc


def algorithm_f64(seed, counter):
    k1, k2 = pair_uniforms(seed, counter, 53)
    m, e = reduce_log(float(k1 + 1), 52, 1023, struct.unpack('<d', struct.pack('<Q', 0x3FF6A09E667F3BCD))[0])
    e = float(e - 53)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    p = horner(z, ['0x1.5555555555594p-1', '0x1.999999997f6f5p-2', '0x1.249249423e2a7p-2', '0x1.c71c51d473cc4p-3',
                   '0x1.7466486191975p-3', '0x1.39a0e09950f99p-3', '0x1.2f0d2d34cc937p-3'])
    ln_m = 2.0 * s + s * z * p
    ln_u = e * float.fromhex('0x1.62e42fefa39cp-1') + (e * float.fromhex('0x1.79abc9e3b398p-48') + ln_m)
    r = math.sqrt(-2.0 * ln_u)
    quadrant = (k2 + (1 << 50)) >> 51
    t = float(k2 - (quadrant << 51)) * float.fromhex('0x1.921fb54442d18p-51')
    z = t * t
    sp = horner(z, ['-0x1.5555555555548p-3', '0x1.111111110f80ap-7', '-0x1.a01a019c06493p-13', '0x1.71de356f7940ap-19',
                    '-0x1.ae5e60a67ae11p-26', '0x1.5d9193b3477e3p-33'])
    cp = horner(z, ['0x1.555555555554bp-5', '-0x1.6c16c16c15095p-10', '0x1.a01a019c9de16p-16', '-0x1.27e4f7fd1eaddp-22',
                    '0x1.1ee9e400a520dp-29', '-0x1.8faad9f48a133p-37'])
    st = t + t * z * sp
    ct = (1.0 - 0.5 * z) + z * z * cp
    return r * trig(quadrant & 3, ct, st, counter & 1)


CASES = [(42, c) for c in range(8)] + [(0, 0), (0, 1), (7, 1000001), (2**64 - 1, 2**40 + 3)]

if __name__ == '__main__':
    print('// seed, counter, float32 exact (rounded), float32 algorithm bits, float64 exact (rounded), float64 algorithm')
    for seed, counter in CASES:
        e32 = f32(float(exact(seed, counter, 24)))
        a32 = algorithm_f32(seed, counter)
        e64 = float(exact(seed, counter, 53))
        a64 = algorithm_f64(seed, counter)
        print(f'{{{seed}ull, {counter}ull, {e32.hex()}f, 0x{f32_bits(a32):08X}u, {e64.hex()}, {a64.hex()}}},')
