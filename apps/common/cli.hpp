#pragma once
// A small command-line parser for the programs in apps/ and bench/: options
// of the form --name value or --flag; every error names the option.

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rampart::cli {

class options {
public:
    /// flags: names that take no value.
    options(int argc, char** argv, std::set<std::string> flags = {}) {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i];
            if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
            a = a.substr(2);
            if (flags.count(a)) {
                values_[a] = "1";
            } else {
                if (i + 1 >= argc) throw std::invalid_argument("option --" + a + " needs a value");
                values_[a] = argv[++i];
            }
        }
    }

    bool flag(const std::string& name) { return take(name).has_value; }

    std::string get(const std::string& name, const std::string& fallback) {
        auto v = take(name);
        return v.has_value ? v.text : fallback;
    }

    std::uint64_t get_uint(const std::string& name, std::uint64_t fallback) {
        auto v = take(name);
        if (!v.has_value) return fallback;
        char* end = nullptr;
        unsigned long long x = std::strtoull(v.text.c_str(), &end, 10);
        if (v.text.empty() || *end != '\0' || v.text[0] == '-')
            throw std::invalid_argument("--" + name + " expects a non-negative integer, got '" + v.text + "'");
        return x;
    }

    double get_double(const std::string& name, double fallback) {
        auto v = take(name);
        if (!v.has_value) return fallback;
        char* end = nullptr;
        double x = std::strtod(v.text.c_str(), &end);
        if (v.text.empty() || *end != '\0') throw std::invalid_argument("--" + name + " expects a number, got '" + v.text + "'");
        return x;
    }

    /// Call after reading every option: anything left is unknown.
    void finish() const {
        for (auto& [k, v] : values_)
            if (!used_.count(k)) throw std::invalid_argument("unknown option --" + k);
    }

private:
    struct value {
        bool has_value = false;
        std::string text;
    };
    value take(const std::string& name) {
        used_.insert(name);
        auto it = values_.find(name);
        if (it == values_.end()) return {};
        return {true, it->second};
    }
    std::map<std::string, std::string> values_;
    std::set<std::string> used_;
};

}  // namespace rampart::cli
