// What a terminal shows for one line of program output: progress bars redraw their line with
// carriage returns and backspaces and colour it with ANSI escapes (Keras 3, tf.keras, tqdm).
#pragma once

#include <string>
#include <string_view>

namespace scalebench::util {

// True when `text` holds anything a terminal would not print as it is: \r, \b, \t, ESC or
// another C0 control. Text without them is its own terminal view.
bool needs_terminal_view(std::string_view text);

// The line as a terminal (ECMA-48) leaves it: \r returns to column 0 and later text overwrites,
// \b moves one column back, \t advances to the next multiple of 8, `ESC [ ... K` erases, `ESC [ n
// G/C/D` move the cursor, other escape sequences (colours, OSC titles) and control characters
// print nothing; trailing blanks are dropped. One column per code point (no wide characters).
// `text` must be valid UTF-8 (sanitize first).
std::string terminal_view(std::string_view text);

}  // namespace scalebench::util
