#pragma once

namespace tessera {
inline constexpr const char* kVersion = "0.1.0";
}
