// Reading inputs with a bound and writing outputs all at once.
//
// ReadFileBounded reads at most `max_bytes` (a file named by mistake — /dev/zero, /dev/urandom,
// a log of gigabytes — is an error, not an allocation of everything it holds), and never waits on
// a FIFO that no one writes to. WriteFileAtomic writes a temporary file beside the target and
// renames it over the target, so a full disk or a kill leaves the old file (or none), never a
// truncated one. Both return messages without a location: the caller names the option or key.
#ifndef SHARDSIM_BASE_FILE_IO_H_
#define SHARDSIM_BASE_FILE_IO_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/base/status.h"

namespace shardsim {

// The largest configuration file shardsim reads (scenario, model, hardware, topology, HF config,
// sweep spec, kernel table): 16 MiB, some hundred times the largest shipped one.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t{16} << 20;

// The content of `path`, or kNotFound "cannot open 'PATH': REASON", or kInvalidInput
// "'PATH' is larger than N MiB; ..." past `max_bytes`. A directory is an error; a FIFO or pipe is
// read to its end (an unwritten FIFO reads as empty instead of blocking).
Result<std::string> ReadFileBounded(const std::string& path, uint64_t max_bytes);

// Writes `content` to `path` through a temporary file in the same directory, then renames it;
// on any failure the temporary file is removed and `path` is untouched.
Status WriteFileAtomic(const std::string& path, std::string_view content);

// Whether `a` and `b` name the same existing file (same device and inode).
bool SameFile(const std::string& a, const std::string& b);

}  // namespace shardsim

#endif  // SHARDSIM_BASE_FILE_IO_H_
