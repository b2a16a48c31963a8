// The chunks of the results files are compressed outside HDF5 (io/hdf5_support.hpp, issue 25): a shuffled
// chunk of doubles, plane by plane, the planes of noise (the low bytes of computed mantissas) stored and the
// others deflated, in one zlib stream that any inflate reads. Deflating every plane took three times the CPU
// on bench/scale_long.ini's chunks for a file 0.5 % smaller; storing the noise must cost no more than that.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "io/hdf5_support.hpp"

namespace clm {
namespace {

// HDF5's shuffle filter: byte b of element i goes to b * elements + i.
std::vector<unsigned char> shuffled(const std::vector<double>& values) {
  const size_t n = values.size();
  std::vector<unsigned char> out(n * sizeof(double));
  const auto* raw = reinterpret_cast<const unsigned char*>(values.data());
  for (size_t i = 0; i < n; ++i)
    for (size_t b = 0; b < sizeof(double); ++b) out[b * n + i] = raw[i * sizeof(double) + b];
  return out;
}

std::vector<unsigned char> compressed(const std::vector<unsigned char>& in, size_t planes) {
  std::vector<unsigned char> out(hdf5::deflate_bound(in.size(), planes));
  out.resize(hdf5::deflate(in.data(), in.size(), planes, out.data(), out.size(), "test"));
  return out;
}

std::vector<unsigned char> inflated(const std::vector<unsigned char>& in, size_t bytes) {
  std::vector<unsigned char> out(bytes + 1);
  uLongf n = static_cast<uLongf>(out.size());
  EXPECT_EQ(uncompress(out.data(), &n, in.data(), static_cast<uLong>(in.size())), Z_OK);
  out.resize(n);
  return out;
}

// Samples as a run records them: 601 rows of 16 smooth coordinates (a chunk of q of the long grid).
std::vector<double> trajectory_chunk() {
  std::vector<double> v;
  for (int k = 0; k < 601; ++k)
    for (int i = 0; i < 16; ++i) {
      const double t = 0.01 * k;
      v.push_back(std::sin(0.7 * t + i) + 0.3 * std::cos(1.9 * t * (i + 1)) / (i + 1));
    }
  return v;
}

TEST(ChunkCompression, NoisePlanesAreStoredTheRestDeflatedAndEveryChunkInflatesBack) {
  // 8 planes of 8 KiB: six of uniform noise, one slowly varying, one constant.
  const size_t plane = 8192;
  std::vector<unsigned char> chunk(8 * plane);
  std::mt19937 rng(7);
  for (size_t i = 0; i < 6 * plane; ++i) chunk[i] = static_cast<unsigned char>(rng());
  for (size_t i = 0; i < plane; ++i) chunk[6 * plane + i] = static_cast<unsigned char>(i / 512);
  for (size_t i = 0; i < plane; ++i) chunk[7 * plane + i] = 0x3f;
  for (size_t b = 0; b < 8; ++b) EXPECT_EQ(hdf5::looks_like_noise(chunk.data() + b * plane, plane), b < 6);
  const auto packed = compressed(chunk, 8);
  EXPECT_EQ(inflated(packed, chunk.size()), chunk);
  // The noise is stored (a copy, 5 bytes of header per stored block), the two other planes shrink to almost
  // nothing: 49152 bytes of noise and under 200 bytes for the rest.
  EXPECT_GE(packed.size(), 6 * plane);
  EXPECT_LT(packed.size(), 6 * plane + 200);

  // Computed samples: no larger than deflating every plane at level 1, and read back by any inflate.
  const auto samples = shuffled(trajectory_chunk());
  const size_t n = samples.size() / 8;
  for (size_t b = 0; b < 8; ++b)  // the six low bytes of the mantissas are noise, sign and exponent are not
    EXPECT_EQ(hdf5::looks_like_noise(samples.data() + b * n, n), b < 6) << "byte " << b;
  const auto mine = compressed(samples, 8);
  EXPECT_EQ(inflated(mine, samples.size()), samples);
  std::vector<unsigned char> all(compressBound(static_cast<uLong>(samples.size())));
  uLongf all_size = static_cast<uLongf>(all.size());
  ASSERT_EQ(compress2(all.data(), &all_size, samples.data(), static_cast<uLong>(samples.size()), hdf5::kDeflateLevel), Z_OK);
  // Stored noise costs no space: deflate's literal codes cannot shorten it either (63120 bytes against
  // 64011 here).
  EXPECT_LE(mine.size(), all_size);
  EXPECT_LT(static_cast<double>(mine.size()), 0.95 * static_cast<double>(samples.size()));  // it does compress

  // Small chunks, a single plane, planes that do not divide the bytes: a zlib stream all the same.
  for (const size_t bytes : {size_t{0}, size_t{8}, size_t{200}, size_t{4100}})
    for (const size_t planes : {size_t{1}, size_t{8}}) {
      const std::vector<unsigned char> part(samples.begin(), samples.begin() + static_cast<long>(bytes));
      EXPECT_EQ(inflated(compressed(part, planes), bytes), part) << bytes << " bytes, " << planes << " planes";
    }
}

}  // namespace
}  // namespace clm
