// Everything a Tessera user needs: #include <tessera/tessera.hpp>.
#pragma once

#include "tessera/config.hpp"
#include "tessera/dist.hpp"
#include "tessera/dtype.hpp"
#include "tessera/errors.hpp"
#include "tessera/factories.hpp"
#include "tessera/generator.hpp"
#include "tessera/local.hpp"
#include "tessera/ops.hpp"
#include "tessera/plugins.hpp"
#include "tessera/process_group.hpp"
#include "tessera/rank_map.hpp"
#include "tessera/scalar.hpp"
#include "tessera/sym_int.hpp"
#include "tessera/tensor.hpp"
#include "tessera/version.hpp"
