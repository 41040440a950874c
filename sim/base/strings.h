// Small string helpers shared by every module: "did you mean" suggestions, joining, trimming.
#ifndef SHARDSIM_BASE_STRINGS_H_
#define SHARDSIM_BASE_STRINGS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardsim {

// Levenshtein distance (insertions, deletions, substitutions each cost 1).
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a plausible typo (distance at most
// max(2, |word|/3)); ties go to the earliest candidate, so the answer is deterministic.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

// "; did you mean 'x'?" or "" when nothing is close.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c" (or with another separator).
std::string Join(const std::vector<std::string>& parts, std::string_view sep = ", ");

std::string_view TrimView(std::string_view s);
std::string ToLower(std::string_view s);

}  // namespace shardsim

#endif  // SHARDSIM_BASE_STRINGS_H_
