// MPI return codes as Tessera errors: the plugin's communicator returns codes (MPI_ERRORS_RETURN)
// instead of aborting, and every code that is not MPI_SUCCESS becomes an sdk::Error carrying
// MPI's own text, so the host sees what MPI said rather than a number.
#pragma once

#include <string>

#include "tessera/sdk/status.h"

namespace tessera::transport_mpi {

// Throws sdk::Error(code, "transport 'mpi': <what>"): every message names the transport, since the
// host may have several.
[[noreturn]] void fail(tessera_status code, const std::string& what);

// MPI_Error_string of `code`, with the code itself ("MPI_ERR_TRUNCATE: message truncated (code 15)").
std::string mpi_error_text(int code);

// The error class of `code` (MPI_Error_class), e.g. MPI_ERR_TRUNCATE for an implementation's own code.
int mpi_error_class(int code);

// Fails with TESSERA_INTERNAL and "<what>: <MPI text>" unless `code` is MPI_SUCCESS.
void check_mpi(int code, const std::string& what);

// "MPI_THREAD_SERIALIZED" for MPI_THREAD_SERIALIZED, and so on.
std::string thread_level_name(int level);

}  // namespace tessera::transport_mpi
