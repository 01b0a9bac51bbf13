#include "compute/experiments/report/Provenance.hpp"

#include "compute/Table.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <thread>

namespace inferscope::compute::experiments {

namespace {

// The SHA-256 state over a stream of bytes (FIPS 180-4: 64-byte blocks, big-endian words).
class Sha256 {
public:
    void update(const std::uint8_t* data, std::size_t size) {
        length_ += size;
        while (size > 0) {
            const std::size_t take = std::min(size, block_.size() - used_);
            std::copy(data, data + take, block_.begin() + std::ptrdiff_t(used_));
            used_ += take;
            data += take;
            size -= take;
            if (used_ == block_.size()) {
                compress();
                used_ = 0;
            }
        }
    }
    std::string hex() {
        const std::uint64_t bits = length_ * 8;
        const std::uint8_t one = 0x80, zero = 0;
        update(&one, 1);
        while (used_ != 56) update(&zero, 1);
        std::uint8_t tail[8];
        for (int i = 0; i < 8; ++i) tail[i] = std::uint8_t(bits >> (56 - 8 * i));
        update(tail, 8);
        std::string out;
        char digits[9];
        for (auto word : state_) {
            std::snprintf(digits, sizeof digits, "%08x", word);
            out += digits;
        }
        return out;
    }

private:
    static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
    void compress() {
        static constexpr std::uint32_t k[64] = {
            0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
            0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
            0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
            0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
            0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
            0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
            0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
            0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
            0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
            0xc67178f2};
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = std::uint32_t(block_[4 * i]) << 24 | std::uint32_t(block_[4 * i + 1]) << 16 |
                   std::uint32_t(block_[4 * i + 2]) << 8 | std::uint32_t(block_[4 * i + 3]);
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        auto [a, b, c, d, e, f, g, h] = state_;
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
            const std::uint32_t choose = (e & f) ^ (~e & g);
            const std::uint32_t t1 = h + s1 + choose + k[i] + w[i];
            const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
            const std::uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
            const std::uint32_t t2 = s0 + majority;
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        const std::uint32_t add[8] = {a, b, c, d, e, f, g, h};
        for (int i = 0; i < 8; ++i) state_[std::size_t(i)] += add[i];
    }

    std::array<std::uint32_t, 8> state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                        0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::array<std::uint8_t, 64> block_{};
    std::size_t used_ = 0;
    std::uint64_t length_ = 0;
};

void hashFile(Sha256& hash, const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string() + " for its SHA-256");
    std::vector<char> buffer(1 << 20);
    while (in) {
        in.read(buffer.data(), std::streamsize(buffer.size()));
        hash.update(reinterpret_cast<const std::uint8_t*>(buffer.data()), std::size_t(in.gcount()));
    }
}

std::string commandOutput(const std::string& command) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe) return {};
    std::string out;
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

} // namespace

std::string sha256Hex(std::span<const std::uint8_t> bytes) {
    Sha256 hash;
    hash.update(bytes.data(), bytes.size());
    return hash.hex();
}

std::string fileSha256(const std::filesystem::path& path) {
    Sha256 hash;
    if (std::filesystem::is_directory(path)) {
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::directory_iterator(path))
            if (entry.is_regular_file()) files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            const std::string name = file.filename().string();
            hash.update(reinterpret_cast<const std::uint8_t*>(name.data()), name.size());
            hashFile(hash, file);
        }
    } else {
        hashFile(hash, path);
    }
    return hash.hex();
}

std::string cpuDescription() {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model = "unknown CPU";
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) model = line.substr(colon + 2);
            break;
        }
    return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " logical cores)";
}

std::string sourceCommit() {
    // The tree the program was built from (resources are embedded, so nothing else leads there);
    // an installed copy whose tree is gone says so.
    const std::filesystem::path tree = INFERSCOPE_SOURCE_TREE;
    if (!std::filesystem::exists(tree / ".git"))
        return "unknown (" + tree.string() + " is no git tree)";
    const std::string quoted = "'" + tree.string() + "'";
    const std::string head =
        commandOutput("git -C " + quoted + " rev-parse --short HEAD 2>/dev/null");
    if (head.empty()) return "unknown (git could not read " + tree.string() + ")";
    const std::string dirty =
        commandOutput("git -C " + quoted + " status --porcelain --untracked-files=no 2>/dev/null");
    return head + (dirty.empty() ? "" : " + local changes");
}

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[40];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc);
    return text;
}

std::vector<std::pair<std::string, std::string>>
standardProvenance(const std::filesystem::path& model, const std::string& commandLine) {
    std::uintmax_t bytes = 0;
    if (std::filesystem::is_directory(model)) {
        for (const auto& entry : std::filesystem::directory_iterator(model))
            if (entry.is_regular_file()) bytes += entry.file_size();
    } else {
        bytes = std::filesystem::file_size(model);
    }
    return {{"model file", model.filename().string()},
            {"model path", model.string()},
            {"model size",
             groupThousands(std::int64_t(bytes)) + " bytes (" + humanBytes(double(bytes)) + ")"},
            {"model SHA-256", fileSha256(model)},
            {"CPU", cpuDescription()},
            {"InferScope commit", sourceCommit()},
            {"date", utcNow()},
            {"command line", commandLine}};
}

} // namespace inferscope::compute::experiments
