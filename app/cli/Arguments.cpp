#include "app/cli/Arguments.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace inferscope::cli {

Arguments::Arguments(const std::vector<std::string>& args, const OptionSpec& spec) {
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        std::string inlineValue;
        bool hasInline = false;
        if (arg.rfind("--", 0) == 0) {
            if (auto eq = arg.find('='); eq != std::string::npos) {
                inlineValue = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                hasInline = true;
            }
        }
        if (auto alias = spec.aliases.find(arg); alias != spec.aliases.end()) arg = alias->second;
        if (arg.size() > 1 && arg[0] == '-' &&
            !(arg.size() > 1 && std::isdigit(static_cast<unsigned char>(arg[1])))) {
            if (spec.flags.count(arg)) {
                if (hasInline) throw UsageError("option " + arg + " takes no value");
                flags_.insert(arg);
            } else if (spec.valued.count(arg)) {
                if (hasInline)
                    values_[arg] = inlineValue;
                else if (i + 1 < args.size())
                    values_[arg] = args[++i];
                else
                    throw UsageError("option " + arg + " needs a value");
            } else {
                throw UsageError("unknown option " + arg);
            }
        } else {
            positionals_.push_back(args[i]);
        }
    }
}

const std::string& Arguments::positional(std::size_t index, const char* what) const {
    if (index >= positionals_.size()) throw UsageError(std::string("missing ") + what, true);
    return positionals_[index];
}

void Arguments::requirePositionals(const std::vector<std::string>& names) const {
    if (positionals_.size() == names.size()) return;
    if (positionals_.size() < names.size())
        throw UsageError("missing " + names[positionals_.size()], true);
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "" : " ") + name;
    throw UsageError("unexpected argument '" + positionals_[names.size()] + "' (expects " +
                         (list.empty() ? std::string("none") : list) + ")",
                     true);
}

std::optional<std::string> Arguments::value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Arguments::valueOr(const std::string& name, const std::string& fallback) const {
    return value(name).value_or(fallback);
}

long long Arguments::integer(const std::string& name, long long fallback, long long min,
                             long long max) const {
    auto text = value(name);
    if (!text) return fallback;
    long long result = 0;
    auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), result);
    if (error != std::errc() || end != text->data() + text->size())
        throw UsageError(name + " expects an integer, got '" + *text + "'");
    if (result < min || result > max)
        throw UsageError(name + " must be between " + std::to_string(min) + " and " +
                         std::to_string(max));
    return result;
}

std::vector<std::uint32_t> parsePositiveList(const std::string& text, const char* option) {
    std::vector<std::uint32_t> values;
    for (const auto& item : parseNameList(text)) {
        std::uint32_t value = 0;
        auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (item.empty() || error != std::errc() || end != item.data() + item.size() ||
            value == 0 || value > (1u << 20))
            throw UsageError(std::string(option) + " expects positive integers, got '" + item +
                             "'");
        values.push_back(value);
    }
    if (values.empty()) throw UsageError(std::string(option) + " is empty");
    return values;
}

std::vector<std::string> parseNameList(const std::string& text) {
    std::vector<std::string> names;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        auto end = text.find(',', begin);
        if (end == std::string::npos) end = text.size();
        names.push_back(text.substr(begin, end - begin));
        begin = end + 1;
    }
    if (!text.empty() && text.back() == ',') names.pop_back();
    if (text.empty()) names.clear();
    return names;
}

std::vector<double> parseNumberList(const std::string& text, const char* option, double min,
                                    double max) {
    std::vector<double> values;
    for (const auto& item : parseNameList(text)) {
        char* end = nullptr;
        double value = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !std::isfinite(value) || value < min || value > max)
            throw UsageError(std::string(option) + " expects numbers from " + std::to_string(min) +
                             " to " + std::to_string(max) + ", got '" + item + "'");
        values.push_back(value);
    }
    if (values.empty()) throw UsageError(std::string(option) + " is empty");
    return values;
}

double Arguments::number(const std::string& name, double fallback, double min, double max) const {
    auto text = value(name);
    if (!text) return fallback;
    char* end = nullptr;
    double result = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(result))
        throw UsageError(name + " expects a number, got '" + *text + "'");
    if (result < min || result > max) {
        // %g: "between 0 and 100", not "0.000000 and 100.000000".
        char range[96];
        std::snprintf(range, sizeof range, " must be between %.15g and %.15g", min, max);
        throw UsageError(name + range);
    }
    return result;
}

} // namespace inferscope::cli
