#pragma once
// Command-line arguments of one subcommand: positionals and --options. Each command
// declares which options take a value and which are flags, so a typo is an error
// instead of being silently ignored.
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope::cli {

// A user mistake: printed as one line on stderr, exit status 2; with showUsage (missing
// arguments) the command's usage follows.
class UsageError : public std::runtime_error {
public:
    explicit UsageError(const std::string& what, bool showUsage = false)
        : std::runtime_error(what), showUsage_(showUsage) {}
    bool showUsage() const { return showUsage_; }

private:
    bool showUsage_ = false;
};

struct OptionSpec {
    std::set<std::string> valued;               // e.g. {"-n", "--temp"}
    std::set<std::string> flags;                // e.g. {"--json", "--greedy"}
    std::map<std::string, std::string> aliases; // short -> long, e.g. {"-p", "--prompt"}
};

class Arguments {
public:
    Arguments(const std::vector<std::string>& args, const OptionSpec& spec);

    const std::vector<std::string>& positionals() const { return positionals_; }
    const std::string& positional(std::size_t index, const char* what) const;
    // Exactly these positionals (e.g. {"MODEL", "TEXT"}), else a UsageError that shows usage.
    void requirePositionals(const std::vector<std::string>& names) const;
    bool flag(const std::string& name) const { return flags_.count(name) != 0; }
    std::optional<std::string> value(const std::string& name) const;
    std::string valueOr(const std::string& name, const std::string& fallback) const;
    long long integer(const std::string& name, long long fallback, long long min,
                      long long max) const;
    double number(const std::string& name, double fallback, double min, double max) const;

private:
    std::vector<std::string> positionals_;
    std::set<std::string> flags_;
    std::map<std::string, std::string> values_;
};

// Comma-separated option values: "16,64,256" (each from 1 to 2^20), "fp16,q8_0", "8,16,24.5".
std::vector<std::uint32_t> parsePositiveList(const std::string& text, const char* option);
std::vector<std::string> parseNameList(const std::string& text);
std::vector<double> parseNumberList(const std::string& text, const char* option, double min,
                                    double max);

} // namespace inferscope::cli
