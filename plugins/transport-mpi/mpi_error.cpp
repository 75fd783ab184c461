#include "mpi_error.hpp"

#include <mpi.h>

#include "tessera/sdk/cpp/errors.hpp"

namespace tessera::transport_mpi {

void fail(tessera_status code, const std::string& what) {
  throw sdk::Error(code, "transport 'mpi': " + what);
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  // MPI_Error_string may be called before MPI_Init and after MPI_Finalize, so this never fails
  // for a lack of MPI; an unknown code just gets the number.
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0)
    return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length)) + " (code " + std::to_string(code) + ")";
}

int mpi_error_class(int code) {
  int error_class = MPI_ERR_UNKNOWN;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return MPI_ERR_UNKNOWN;
  return error_class;
}

void check_mpi(int code, const std::string& what) {
  if (code != MPI_SUCCESS) fail(TESSERA_INTERNAL, what + ": " + mpi_error_text(code));
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "thread level " + std::to_string(level);
  }
}

}  // namespace tessera::transport_mpi
