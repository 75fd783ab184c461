/* Element types are DLPack's DLDataType (code, bits, lanes = 1).
 *
 * Tessera v1 knows five element types: float32 {kDLFloat,32}, float64 {kDLFloat,64},
 * int32 {kDLInt,32}, int64 {kDLInt,64} and bool {TESSERA_DL_BOOL_CODE,8}, one byte holding 0 or 1.
 * Code 6 is the one DLPack 0.8 later named kDLBool; Debian's DLPack 0.6 predates it, so the SDK
 * names it itself. */
#ifndef TESSERA_SDK_DTYPE_H
#define TESSERA_SDK_DTYPE_H

#include <dlpack/dlpack.h>

#define TESSERA_DL_BOOL_CODE 6

#endif
