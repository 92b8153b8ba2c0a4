// Footnotes of a report table. Warnings of neighbouring rows often differ only in their numbers ("global batch
// 14848 exceeds the largest RCP batch 16384", "... 29696 exceeds ... 16384"); a footnote per row would repeat
// near-identical text. Messages that are equal once their numbers are masked share one footnote, printed once,
// with every number that differs between them as its range ("global batch 14848..29696 exceeds the largest RCP
// batch 16384"); the rows' marks say which rows it applies to.
#pragma once

#include <string>
#include <vector>

namespace ttsim::planning {

class Footnotes {
public:
    // The footnote number (1-based) of `message`, new or shared with an earlier one of the same shape.
    int add(const std::string& message);
    bool empty() const { return notes_.empty(); }
    // "[k] text" per footnote, in order of first appearance.
    std::vector<std::string> lines() const;

private:
    struct Number {
        double low = 0, high = 0;
        std::string low_text, high_text;
    };
    struct Note {
        std::vector<std::string> text;   // the message's text between its numbers (numbers.size() + 1 parts)
        std::vector<Number> numbers;
    };
    std::vector<Note> notes_;
};

}  // namespace ttsim::planning
