#include "models/planning/footnotes.hpp"

#include <cctype>
#include <cstdlib>

namespace ttsim::planning {

namespace {

struct Split {
    std::vector<std::string> text;
    std::vector<std::string> numbers;
};

// Digit runs, with one decimal point inside ("2.92"), are numbers; a digit glued to a letter before it (H100,
// dgx-h200, v4) is part of a name and stays text, so names never merge into ranges.
Split split_numbers(const std::string& message) {
    Split s;
    s.text.emplace_back();
    for (std::size_t i = 0; i < message.size();) {
        const bool starts = std::isdigit(static_cast<unsigned char>(message[i])) &&
                            (i == 0 || !std::isalpha(static_cast<unsigned char>(message[i - 1])));
        if (!starts) {
            s.text.back() += message[i++];
            continue;
        }
        std::size_t j = i;
        while (j < message.size() && std::isdigit(static_cast<unsigned char>(message[j]))) ++j;
        if (j + 1 < message.size() && message[j] == '.' && std::isdigit(static_cast<unsigned char>(message[j + 1]))) {
            ++j;
            while (j < message.size() && std::isdigit(static_cast<unsigned char>(message[j]))) ++j;
        }
        s.numbers.push_back(message.substr(i, j - i));
        s.text.emplace_back();
        i = j;
    }
    return s;
}

}  // namespace

int Footnotes::add(const std::string& message) {
    const Split s = split_numbers(message);
    for (std::size_t k = 0; k < notes_.size(); ++k) {
        Note& note = notes_[k];
        if (note.text != s.text) continue;
        for (std::size_t n = 0; n < s.numbers.size(); ++n) {
            const double value = std::strtod(s.numbers[n].c_str(), nullptr);
            Number& range = note.numbers[n];
            if (value < range.low) range.low = value, range.low_text = s.numbers[n];
            if (value > range.high) range.high = value, range.high_text = s.numbers[n];
        }
        return static_cast<int>(k) + 1;
    }
    Note note;
    note.text = s.text;
    for (const std::string& number : s.numbers) {
        const double value = std::strtod(number.c_str(), nullptr);
        note.numbers.push_back({value, value, number, number});
    }
    notes_.push_back(note);
    return static_cast<int>(notes_.size());
}

std::vector<std::string> Footnotes::lines() const {
    std::vector<std::string> lines;
    for (std::size_t k = 0; k < notes_.size(); ++k) {
        const Note& note = notes_[k];
        std::string line = "[" + std::to_string(k + 1) + "] " + note.text[0];
        for (std::size_t n = 0; n < note.numbers.size(); ++n) {
            const Number& range = note.numbers[n];
            line += range.low == range.high ? range.low_text : range.low_text + ".." + range.high_text;
            line += note.text[n + 1];
        }
        lines.push_back(line);
    }
    return lines;
}

}  // namespace ttsim::planning
