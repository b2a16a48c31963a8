#include "io/run_target.hpp"

namespace clm {

AppendableDataset::AppendableDataset(RunTarget& target, RunTarget::Object parent, std::string name, hsize_t cols,
                                     bool matrix, hsize_t max_rows)
    : target_(target), parent_(parent), name_(std::move(name)), cols_(cols), matrix_(matrix) {
  block_rows_ = hdf5::chunk_rows(cols_, sizeof(double));
  // With a known bound, the fewest chunks of at most that size, of equal rows: 601 samples of 16 columns are
  // two chunks of 301 rows, not 512 and 89 padded to 512 (a third more bytes to shuffle and deflate per run,
  // measured on bench/scale_long.ini, and the padding stored).
  if (max_rows > 0) {
    const hsize_t chunks = (max_rows + block_rows_ - 1) / block_rows_;
    block_rows_ = (max_rows + chunks - 1) / chunks;
  }
  if (matrix_ && cols_ == 0) return;  // a K x 0 dataset cannot be chunked: written contiguous at close()
  const hsize_t row = std::max<hsize_t>(cols_, 1);
  if (max_rows > 0 && max_rows * row * sizeof(double) <= kCompactBytes) {
    compact_ = true;
    block_rows_ = max_rows + 1;  // never full while the bound holds
    buffer_.reserve(max_rows * row);
    return;
  }
  ds_ = target_.chunked_dataset(parent_, name_, cols_, matrix_, block_rows_);
  open_ = true;
  buffer_.reserve(block_rows_ * row);
}

void AppendableDataset::pack() {
  if (compact_ || (matrix_ && cols_ == 0) || buffered_ == 0) return;
  const size_t row = static_cast<size_t>(std::max<hsize_t>(cols_, 1));
  const size_t elements = static_cast<size_t>(block_rows_) * row, bytes = elements * sizeof(double);
  shuffled_.assign(bytes, 0);
  const auto* raw = reinterpret_cast<const unsigned char*>(buffer_.data());
  const size_t filled = buffer_.size();  // elements buffered; the rest of the chunk is the fill value 0
  for (size_t i = 0; i < filled; ++i)
    for (size_t b = 0; b < sizeof(double); ++b) shuffled_[b * elements + i] = raw[i * sizeof(double) + b];
  packed_.resize(hdf5::deflate_bound(bytes, sizeof(double)));
  packed_.resize(hdf5::deflate(shuffled_.data(), bytes, sizeof(double), packed_.data(), packed_.size(), name_));
  packed_rows_ = buffered_;
}

void AppendableDataset::flush() {
  if (buffered_ == 0) return;
  if (!open_) {  // a compact dataset given more rows than its bound
    ds_ = target_.chunked_dataset(parent_, name_, cols_, matrix_, block_rows_);
    open_ = true;
    packed_rows_ = 0;
  }
  if (packed_rows_ == buffered_) target_.write_chunk(ds_, rows_, buffered_, cols_, matrix_, packed_.data(), packed_.size());
  else target_.write_rows(ds_, rows_, buffered_, cols_, matrix_, buffer_.data());
  rows_ += buffered_;
  buffered_ = packed_rows_ = 0;
  buffer_.clear();
}

void AppendableDataset::close() {
  if (matrix_ && cols_ == 0) {
    target_.close(target_.whole_dataset(parent_, name_, rows_, 0, true, nullptr));
    return;
  }
  if (compact_ && !open_) {
    ds_ = target_.whole_dataset(parent_, name_, buffered_, cols_, matrix_, buffer_.data());
    open_ = true;
    rows_ = buffered_;
    buffered_ = 0;
    buffer_.clear();
  } else {
    flush();
  }
  for (const auto& [name, values] : labels) {
    if (!matrix_ && values.size() == 1) target_.attribute(ds_, name, values.front());  // a 1-D dataset: one string
    else target_.attribute(ds_, name, values);
  }
  target_.close(ds_);
  open_ = false;
}

}  // namespace clm
