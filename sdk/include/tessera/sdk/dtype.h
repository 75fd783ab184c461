/* Element types are DLPack's DLDataType (code, bits, lanes = 1).
 *
 * Tessera v1 knows nine element types: float32 {kDLFloat,32}, float64 {kDLFloat,64},
 * int32 {kDLInt,32}, int64 {kDLInt,64} and bool {TESSERA_DL_BOOL_CODE,8}, one byte holding 0 or 1;
 * and since SDK 1.6 bfloat16 {kDLBfloat,16} and float16 {kDLFloat,16} (IEEE binary16), both
 * stored as their 16-bit patterns, int8 {kDLInt,8} and uint8 {kDLUInt,8} (the codes PyTorch's
 * DLPack export uses). A backend must provide copy and cast for a type to hold tensors of it; the
 * host computes every other op on bfloat16/float16 with the op's float32 kernel and on int8/uint8
 * with its int64 kernel (casting the operands, one rounding or wrap per result) where the backend
 * has no kernel for the type itself. sdk/cpp/half_precision.hpp converts the two-byte floats.
 * Code 6 is the one DLPack 0.8 later named kDLBool; Debian's DLPack 0.6 predates it, so the SDK
 * names it itself. */
#ifndef TESSERA_SDK_DTYPE_H
#define TESSERA_SDK_DTYPE_H

#include <dlpack/dlpack.h>

#define TESSERA_DL_BOOL_CODE 6

#endif
