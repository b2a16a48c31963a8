#include "io/part_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "core/types.hpp"
#include "io/signal_cleanup.hpp"

#include <zlib.h>

namespace clm {

namespace {

constexpr char kMagic[8] = {'C', 'L', 'M', 'P', 'A', 'R', 'T', '1'};
constexpr char kEndMagic[8] = {'C', 'L', 'M', 'P', 'E', 'N', 'D', '1'};

enum AttrKind : unsigned char { kDouble = 0, kLong = 1, kString = 2, kDoubles = 3, kStrings = 4 };

// A damaged part: the reader's one failure (turned into nullopt or an OutputError naming the file).
struct Damaged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Reads a part file at given offsets, every length checked against the file's size.
class Reader {
 public:
  explicit Reader(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Damaged(std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw Damaged(std::strerror(errno));
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~Reader() {
    if (fd_ >= 0) ::close(fd_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  uint64_t size() const { return size_; }
  uint64_t offset() const { return offset_ + pos_; }
  void seek(uint64_t at) {
    if (at > size_) throw Damaged("an offset past the end");
    offset_ = at;
    pos_ = end_ = 0;
  }
  void get(void* out, uint64_t bytes) {
    if (bytes > size_ - offset()) throw Damaged("truncated");
    auto* o = static_cast<unsigned char*>(out);
    while (bytes > 0) {
      if (pos_ == end_) fill();
      const uint64_t n = std::min<uint64_t>(bytes, end_ - pos_);
      std::memcpy(o, buffer_ + pos_, n);
      if (checksum_) crc_ = crc32(crc_, o, static_cast<uInt>(n));
      o += n;
      pos_ += n;
      bytes -= n;
    }
  }
  uint64_t u64() {
    uint64_t v;
    get(&v, sizeof v);
    return v;
  }
  char tag() {
    char c;
    get(&c, 1);
    return c;
  }
  // A length of `unit`-byte items that fits in the rest of the file.
  uint64_t length(uint64_t unit = 1) {
    const uint64_t n = u64();
    if (unit == 0 || n > (size_ - offset()) / unit) throw Damaged("a length past the end");
    return n;
  }
  std::string string() {
    std::string s(length(), '\0');
    get(s.data(), s.size());
    return s;
  }
  // The CRC-32 of every byte read from now on.
  void start_checksum() {
    checksum_ = true;
    crc_ = crc32(0, nullptr, 0);
  }
  uint32_t checksum() const { return static_cast<uint32_t>(crc_); }

 private:
  void fill() {
    offset_ += end_;
    pos_ = 0;
    const ssize_t n = ::pread(fd_, buffer_, sizeof buffer_, static_cast<off_t>(offset_));
    if (n <= 0) throw Damaged(n < 0 ? std::strerror(errno) : "truncated");
    end_ = static_cast<uint64_t>(n);
  }
  int fd_ = -1;
  uint64_t size_ = 0, offset_ = 0, pos_ = 0, end_ = 0;
  bool checksum_ = false;
  uLong crc_ = 0;
  unsigned char buffer_[1 << 16];
};

AttrValue read_attr(Reader& r) {
  const unsigned char kind = static_cast<unsigned char>(r.tag());
  switch (kind) {
    case kDouble: {
      double v;
      r.get(&v, sizeof v);
      return v;
    }
    case kLong: {
      int64_t v;
      r.get(&v, sizeof v);
      return static_cast<long>(v);
    }
    case kString:
      return r.string();
    case kDoubles: {
      std::vector<double> v(r.length(sizeof(double)));
      r.get(v.data(), v.size() * sizeof(double));
      return v;
    }
    case kStrings: {
      std::vector<std::string> v(r.length(8));
      for (auto& s : v) s = r.string();
      return v;
    }
    default:
      throw Damaged("an unknown kind of attribute");
  }
}

// One recorded call, read whole (its bytes kept for comparison, its data for the replay).
struct Call {
  char tag = 0;
  RunTarget::Object object = 0;  // parent (G, C, D) or target (K, W, A, X)
  std::string name;
  uint64_t cols = 0, rows = 0, rows_before = 0, block_rows = 0;
  bool matrix = false;
  std::vector<unsigned char> bytes;  // K: the packed chunk
  std::vector<double> data;          // W, D: the rows
  AttrValue value;                   // A
};

// The next call of a run (tag 'E': the run's end). `objects`: the run's objects so far, checked and counted.
Call read_call(Reader& r, RunTarget::Object& objects) {
  Call c;
  c.tag = r.tag();
  auto object = [&] {
    const uint64_t o = r.u64();
    if (o > objects) throw Damaged("an object that does not exist");
    return static_cast<RunTarget::Object>(o);
  };
  switch (c.tag) {
    case 'E':
      break;
    case 'G':
      c.object = object();
      c.name = r.string();
      ++objects;
      break;
    case 'C':
      c.object = object();
      c.name = r.string();
      c.cols = r.u64();
      c.matrix = r.tag() != 0;
      c.block_rows = r.u64();
      ++objects;
      break;
    case 'K':
      c.object = object();
      c.rows_before = r.u64();
      c.rows = r.u64();
      c.cols = r.u64();
      c.matrix = r.tag() != 0;
      c.bytes.resize(r.length());
      r.get(c.bytes.data(), c.bytes.size());
      break;
    case 'W':
    case 'D': {
      c.object = object();
      if (c.tag == 'D') c.name = r.string();
      if (c.tag == 'W') c.rows_before = r.u64();
      c.rows = r.u64();
      c.cols = r.u64();
      c.matrix = r.tag() != 0;
      const uint64_t n = r.length(sizeof(double));
      const uint64_t row = c.cols == 0 ? (c.matrix ? 0 : 1) : c.cols;
      if (c.rows > 0 && row > 0 && n != c.rows * row) throw Damaged("rows of the wrong size");
      if (n > 0 && (c.rows == 0 || row == 0)) throw Damaged("rows of the wrong size");
      c.data.resize(n);
      r.get(c.data.data(), n * sizeof(double));
      if (c.tag == 'D') ++objects;
      break;
    }
    case 'A':
      c.object = object();
      c.name = r.string();
      c.value = read_attr(r);
      break;
    case 'X':
      c.object = object();
      if (c.object == 0) throw Damaged("a close of /runs");
      break;
    default:
      throw Damaged("an unknown record");
  }
  return c;
}

SummaryTable read_summary(Reader& r) {
  SummaryTable t(r.length(8));
  for (auto& c : t) {
    c.name = r.string();
    c.description = r.string();
    const char kind = r.tag();
    if (kind == 0) {
      std::vector<double> v(r.length(sizeof(double)));
      r.get(v.data(), v.size() * sizeof(double));
      c.values = std::move(v);
    } else if (kind == 1) {
      std::vector<int64_t> raw(r.length(sizeof(int64_t)));
      r.get(raw.data(), raw.size() * sizeof(int64_t));
      c.values = std::vector<long>(raw.begin(), raw.end());
    } else if (kind == 2) {
      std::vector<std::string> v(r.length(8));
      for (auto& s : v) s = r.string();
      c.values = std::move(v);
    } else {
      throw Damaged("an unknown kind of column");
    }
  }
  return t;
}

}  // namespace

bool is_timing_attribute(const std::string& name) {
  constexpr std::string_view suffix = "_time_s";
  return (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) ||
         name.rfind("cpu_time_", 0) == 0;
}

// ---- writing ----

PartFileWriter::PartFileWriter(std::string path) : path_(std::move(path)) {
  temp_path_ = path_ + ".tmp-" + std::to_string(::getpid());
  file_ = std::fopen(temp_path_.c_str(), "wbe");
  if (!file_) throw OutputError("cannot write part file '" + path_ + "': " + std::strerror(errno));
  cleanup_slot_ = remove_on_signal(temp_path_);
  guarded("its header", [&] { put(kMagic, sizeof kMagic); });
}

PartFileWriter::~PartFileWriter() {
  if (file_) std::fclose(file_);
  if (!committed_) ::unlink(temp_path_.c_str());
  forget_on_signal(cleanup_slot_);
}

void PartFileWriter::fail(const std::string& what) {
  throw OutputError("cannot write part file '" + path_ + "': " + what + ": " + std::strerror(errno));
}

void PartFileWriter::put(const void* data, size_t bytes) {
  if (!file_) throw OutputError("cannot write part file '" + path_ + "': it is closed after an error");
  if (in_run_ && bytes > 0) crc_ = crc32(crc_, static_cast<const Bytef*>(data), static_cast<uInt>(bytes));
  if (bytes > 0 && std::fwrite(data, 1, bytes, file_) != bytes) {
    const int e = errno;
    std::fclose(file_);
    file_ = nullptr;
    errno = e;
    fail("write failed");
  }
  offset_ += bytes;
}

void PartFileWriter::put_string(const std::string& s) {
  put_u64(s.size());
  put(s.data(), s.size());
}

void PartFileWriter::guarded(const std::string&, const std::function<void()>& body) { body(); }

void PartFileWriter::begin_run(const std::string& run_id, long sweep_index) {
  runs_.push_back({run_id, sweep_index, offset_, 0});
  objects_ = 0;
  in_run_ = true;
  crc_ = crc32(0, nullptr, 0);
  tag('R');
  put_string(run_id);
}

void PartFileWriter::end_run() {
  tag('E');
  in_run_ = false;
  if (!runs_.empty()) runs_.back().crc = static_cast<uint32_t>(crc_);
}

RunTarget::Object PartFileWriter::group(Object parent, const std::string& name) {
  tag('G');
  put_u64(parent);
  put_string(name);
  return ++objects_;
}

RunTarget::Object PartFileWriter::chunked_dataset(Object parent, const std::string& name, hsize_t cols, bool matrix,
                                                  hsize_t block_rows) {
  tag('C');
  put_u64(parent);
  put_string(name);
  put_u64(cols);
  tag(matrix ? 1 : 0);
  put_u64(block_rows);
  return ++objects_;
}

void PartFileWriter::write_chunk(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                                 const unsigned char* packed, size_t bytes) {
  tag('K');
  put_u64(dataset);
  put_u64(rows_before);
  put_u64(rows);
  put_u64(cols);
  tag(matrix ? 1 : 0);
  put_u64(bytes);
  put(packed, bytes);
}

void PartFileWriter::write_rows(Object dataset, hsize_t rows_before, hsize_t rows, hsize_t cols, bool matrix,
                                const double* data) {
  tag('W');
  put_u64(dataset);
  put_u64(rows_before);
  put_u64(rows);
  put_u64(cols);
  tag(matrix ? 1 : 0);
  const uint64_t n = rows * std::max<hsize_t>(cols, 1);
  put_u64(n);
  put(data, n * sizeof(double));
}

RunTarget::Object PartFileWriter::whole_dataset(Object parent, const std::string& name, hsize_t rows, hsize_t cols,
                                                bool matrix, const double* data) {
  tag('D');
  put_u64(parent);
  put_string(name);
  put_u64(rows);
  put_u64(cols);
  tag(matrix ? 1 : 0);
  const uint64_t n = (matrix && cols == 0) ? 0 : rows * std::max<hsize_t>(cols, 1);
  put_u64(n);
  put(data, n * sizeof(double));
  return ++objects_;
}

void PartFileWriter::attribute(Object object, const std::string& name, const AttrValue& value) {
  tag('A');
  put_u64(object);
  put_string(name);
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, double>) {
          tag(kDouble);
          put(&v, sizeof v);
        } else if constexpr (std::is_same_v<V, long>) {
          tag(kLong);
          const int64_t x = v;
          put(&x, sizeof x);
        } else if constexpr (std::is_same_v<V, std::string>) {
          tag(kString);
          put_string(v);
        } else if constexpr (std::is_same_v<V, std::vector<double>>) {
          tag(kDoubles);
          put_u64(v.size());
          put(v.data(), v.size() * sizeof(double));
        } else {
          tag(kStrings);
          put_u64(v.size());
          for (const auto& s : v) put_string(s);
        }
      },
      value);
}

void PartFileWriter::close(Object object) {
  tag('X');
  put_u64(object);
}

void PartFileWriter::commit(const SummaryTable& summary, const std::vector<std::string>& run_configs,
                            const Provenance& provenance) {
  if (run_configs.size() != runs_.size())
    throw OutputError("cannot write part file '" + path_ + "': " + std::to_string(runs_.size()) + " runs and " +
                      std::to_string(run_configs.size()) + " configurations");
  const uint64_t trailer = offset_;
  tag('T');
  put_u64(runs_.size());
  for (size_t k = 0; k < runs_.size(); ++k) {
    put_string(runs_[k].id);
    put_string(run_configs[k]);
    const int64_t index = runs_[k].sweep_index;
    put(&index, sizeof index);
    put_u64(runs_[k].offset);
    put_u64(runs_[k].crc);
  }
  put_u64(summary.size());
  for (const auto& c : summary) {
    put_string(c.name);
    put_string(c.description);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::vector<double>>) {
            tag(0);
            put_u64(v.size());
            put(v.data(), v.size() * sizeof(double));
          } else if constexpr (std::is_same_v<V, std::vector<long>>) {
            tag(1);
            const std::vector<int64_t> raw(v.begin(), v.end());
            put_u64(raw.size());
            put(raw.data(), raw.size() * sizeof(int64_t));
          } else {
            tag(2);
            put_u64(v.size());
            for (const auto& s : v) put_string(s);
          }
        },
        c.values);
  }
  put_string(provenance.command_line);
  put_string(provenance.config_text);
  put_string(provenance.sweep_config);
  put_u64(trailer);
  put(kEndMagic, sizeof kEndMagic);
  // Complete on disk before it has its name: a part is whole or absent.
  if (std::fflush(file_) != 0) fail("write failed");
  if (::fsync(::fileno(file_)) != 0) fail("fsync failed");
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail("close failed");
  // The directory is not fsynced after the rename: a rename lost to a power cut only means its runs are
  // computed again by --resume (the file itself is whole or absent), and a part is committed every 0.2 s.
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) fail("rename failed");
  committed_ = true;
  forget_on_signal(cleanup_slot_);
}

// ---- reading ----

bool is_part_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (!f) return false;
  char magic[sizeof kMagic];
  const bool part = std::fread(magic, 1, sizeof magic, f) == sizeof magic && std::memcmp(magic, kMagic, sizeof magic) == 0;
  std::fclose(f);
  return part;
}

std::optional<PartContents> read_part(const std::string& path) {
  try {
    Reader r(path);
    if (r.size() < sizeof kMagic + 16) return std::nullopt;
    char magic[8];
    r.get(magic, sizeof magic);
    if (std::memcmp(magic, kMagic, sizeof magic) != 0) return std::nullopt;
    r.seek(r.size() - 16);
    const uint64_t trailer = r.u64();
    r.get(magic, sizeof magic);
    if (std::memcmp(magic, kEndMagic, sizeof magic) != 0 || trailer < sizeof kMagic || trailer >= r.size() - 16)
      return std::nullopt;
    r.seek(trailer);
    if (r.tag() != 'T') return std::nullopt;
    PartContents c;
    const uint64_t runs = r.length(40);
    for (uint64_t k = 0; k < runs; ++k) {
      c.run_ids.push_back(r.string());
      c.run_configs.push_back(r.string());
      int64_t index;
      r.get(&index, sizeof index);
      c.sweep_index.push_back(static_cast<long>(index));
      const uint64_t at = r.u64();
      if (at < sizeof kMagic || at >= trailer) return std::nullopt;
      c.offsets.push_back(at);
      const uint64_t crc = r.u64();
      if (crc > 0xffffffffu) return std::nullopt;
      c.checksums.push_back(static_cast<uint32_t>(crc));
    }
    c.summary = read_summary(r);
    for (const auto& col : c.summary)
      if (col.size() != runs) return std::nullopt;
    c.provenance.command_line = r.string();
    c.provenance.config_text = r.string();
    c.provenance.sweep_config = r.string();
    if (r.offset() != r.size() - 16) return std::nullopt;
    return c;
  } catch (const Damaged&) {
    return std::nullopt;
  }
}

namespace {

// The calls of run `run` of a part, read one at a time (memory: one call, whatever the length of the run).
class RunCalls {
 public:
  RunCalls(const std::string& path, const PartContents& contents, size_t run)
      : reader_(path), id_(contents.run_ids.at(run)), checksum_(contents.checksums.at(run)) {
    reader_.seek(contents.offsets.at(run));
    reader_.start_checksum();
    if (reader_.tag() != 'R' || reader_.string() != id_) throw Damaged("run " + id_ + " is not where its index says");
  }
  // The next call into `c`; false at the run's end, once its checksum is checked.
  bool next(Call& c) {
    c = read_call(reader_, objects_);
    if (c.tag != 'E') return true;
    if (reader_.checksum() != checksum_) throw Damaged("run " + id_ + " fails its checksum");
    return false;
  }

 private:
  Reader reader_;
  std::string id_;
  uint32_t checksum_;
  RunTarget::Object objects_ = 0;
};

// Attribute values alike bit for bit (NaN equals NaN).
bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) return std::memcmp(x, &std::get<double>(b), sizeof(double)) == 0;
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    return x->size() == y.size() && (x->empty() || std::memcmp(x->data(), y.data(), x->size() * sizeof(double)) == 0);
  }
  return a == b;
}

}  // namespace

void replay_run(const std::string& path, const PartContents& contents, size_t run, RunTarget& target) {
  try {
    RunCalls calls(path, contents, run);
    for (Call c; calls.next(c);) {
      switch (c.tag) {
        case 'G':
          target.group(c.object, c.name);
          break;
        case 'C':
          target.chunked_dataset(c.object, c.name, c.cols, c.matrix, c.block_rows);
          break;
        case 'K':
          target.write_chunk(c.object, c.rows_before, c.rows, c.cols, c.matrix, c.bytes.data(), c.bytes.size());
          break;
        case 'W':
          target.write_rows(c.object, c.rows_before, c.rows, c.cols, c.matrix, c.data.data());
          break;
        case 'D':
          target.whole_dataset(c.object, c.name, c.rows, c.cols, c.matrix, c.data.data());
          break;
        case 'A':
          target.attribute(c.object, c.name, c.value);
          break;
        case 'X':
          target.close(c.object);
          break;
      }
    }
  } catch (const Damaged& e) {
    throw OutputError("cannot read part file '" + path + "': " + e.what() + " (damaged: remove that file, and --resume computes its runs again)");
  }
}

std::string run_difference(const std::string& part_a, const PartContents& a, size_t run_a, const std::string& part_b,
                           const PartContents& b, size_t run_b) {
  // Both runs' calls, timing attributes aside, compared in order and one pair at a time (a long run's chunks
  // are never held whole): the same calls make the same objects.
  try {
    RunCalls x(part_a, a, run_a), y(part_b, b, run_b);
    auto next = [](RunCalls& calls, Call& c) {
      while (calls.next(c))
        if (!(c.tag == 'A' && is_timing_attribute(c.name))) return true;
      return false;
    };
    std::vector<std::string> names{"/runs"};  // object k's name, for the message
    Call p, q;
    for (;;) {
      const bool more_p = next(x, p), more_q = next(y, q);
      if (more_p != more_q) return "the number of objects";
      if (!more_p) return "";
      if (p.tag == 'G' || p.tag == 'C' || p.tag == 'D') names.push_back(p.name);
      const bool same = p.tag == q.tag && p.object == q.object && p.name == q.name && p.cols == q.cols &&
                        p.rows == q.rows && p.rows_before == q.rows_before && p.block_rows == q.block_rows &&
                        p.matrix == q.matrix && p.bytes == q.bytes && p.data.size() == q.data.size() &&
                        (p.data.empty() || std::memcmp(p.data.data(), q.data.data(), p.data.size() * sizeof(double)) == 0) &&
                        same_value(p.value, q.value);
      if (!same) {
        if (p.tag == 'A' || q.tag == 'A') return "attribute " + (p.tag == 'A' ? p.name : q.name);
        const std::string object = p.object < names.size() ? names[p.object] : std::string("an object");
        return (p.tag == 'G' || p.tag == 'C' || p.tag == 'D') ? "object " + p.name : "the data of " + object;
      }
    }
  } catch (const Damaged& e) {
    return std::string("an unreadable part (") + e.what() + ")";
  }
}

}  // namespace clm
