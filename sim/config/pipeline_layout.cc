#include "sim/config/pipeline_layout.h"

#include <cctype>

namespace shardsim {
namespace {

// Reads the repeat count after `*` at text[*at]; advances past it.
Result<int64_t> Count(std::string_view text, size_t* at, const std::string& what) {
  if (*at >= text.size() || text[*at] != '*') {
    return Status::Invalid(what + " must be followed by *N (a repeat count)");
  }
  ++*at;
  int64_t n = 0;
  const size_t start = *at;
  while (*at < text.size() && std::isdigit(static_cast<unsigned char>(text[*at])) != 0) {
    n = n * 10 + (text[*at] - '0');
    if (n > kMaxPipelineLayoutPieces) {
      return Status::Invalid("repeat count after " + what + " exceeds " +
                             std::to_string(kMaxPipelineLayoutPieces));
    }
    ++*at;
  }
  if (*at == start) return Status::Invalid("expected a repeat count after '*' of " + what);
  return n;
}

Status Append(std::string* out, std::string_view piece, int64_t times) {
  const int64_t grown =
      static_cast<int64_t>(out->size()) + static_cast<int64_t>(piece.size()) * times;
  if (grown > kMaxPipelineLayoutPieces) {
    return Status::Invalid("the layout expands to more than " +
                           std::to_string(kMaxPipelineLayoutPieces) + " pieces");
  }
  for (int64_t i = 0; i < times; ++i) out->append(piece);
  return Status::Ok();
}

bool IsPiece(char c) { return c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|'; }

std::string Where(size_t at) { return "at character " + std::to_string(at + 1) + ": "; }

// Megatron-Core's unrolling: commas dropped, `(group)*n` and then `x*n` expanded (so a group
// may hold `x*n`, but not another group). `offset` is where `text` starts in the whole string.
Result<std::string> Expand(std::string_view text, size_t offset = 0) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (c == ',') {
      ++at;
      continue;
    }
    if (c == '(') {
      const size_t open = at;
      ++at;
      while (at < text.size() && text[at] != ')') {
        if (text[at] == '(') {
          return Status::Invalid(Where(offset + at) +
                                 "groups do not nest (Megatron-Core unrolls one level)");
        }
        ++at;
      }
      if (at >= text.size()) return Status::Invalid(Where(offset + open) + "'(' is never closed");
      const std::string_view inner = text.substr(open + 1, at - open - 1);
      Result<std::string> group = Expand(inner, offset + open + 1);
      if (!group.ok()) return group.status();
      if (group->empty()) return Status::Invalid(Where(offset + open) + "an empty group");
      ++at;  // past ')'
      Result<int64_t> n = Count(text, &at, "a group");
      if (!n.ok()) return Status::Invalid(Where(offset + open) + n.status().message());
      Status s = Append(&out, *group, *n);
      if (!s.ok()) return s;
      continue;
    }
    if (c == ')') return Status::Invalid(Where(offset + at) + "')' without '('");
    if (!IsPiece(c)) {
      return Status::Invalid(Where(offset + at) + "'" + std::string(1, c) +
                             "' is not a layout piece (E embedding, t decoder layer, m MTP "
                             "module, L loss, | next stage, x*N, (...)*N)");
    }
    const size_t letter = at;
    ++at;
    int64_t n = 1;
    if (at < text.size() && text[at] == '*') {
      Result<int64_t> count = Count(text, &at, std::string("'") + c + "'");
      if (!count.ok()) return Status::Invalid(Where(offset + letter) + count.status().message());
      n = *count;
    }
    Status s = Append(&out, text.substr(letter, 1), n);
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace

int64_t PipelineLayout::total_decoders() const {
  int64_t n = 0;
  for (int64_t d : decoders) n += d;
  return n;
}

int64_t PipelineLayout::total_mtp() const {
  int64_t n = 0;
  for (int64_t d : mtp) n += d;
  return n;
}

Result<PipelineLayout> ParsePipelineLayout(std::string_view text) {
  if (text.empty()) return Status::Invalid("an empty layout");
  Result<std::string> expanded = Expand(text);
  if (!expanded.ok()) return expanded.status();
  PipelineLayout out;
  out.decoders.push_back(0);
  out.mtp.push_back(0);
  bool seen_mtp = false;
  const std::string& e = *expanded;
  for (size_t i = 0; i < e.size(); ++i) {
    switch (e[i]) {
      case '|':
        out.decoders.push_back(0);
        out.mtp.push_back(0);
        break;
      case 't':
        ++out.decoders.back();
        if (seen_mtp) out.mtp_before_decoder = true;
        break;
      case 'm':
        ++out.mtp.back();
        seen_mtp = true;
        break;
      case 'E':
        ++out.embeddings;
        break;
      case 'L':
        ++out.losses;
        break;
      default:
        break;  // Expand let only pieces through
    }
  }
  out.embedding_first = !e.empty() && e.front() == 'E';
  out.loss_last = !e.empty() && e.back() == 'L';
  return out;
}

}  // namespace shardsim
