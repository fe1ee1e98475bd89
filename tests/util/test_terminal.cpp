// util::terminal_view: progress bars as a terminal shows them.
#include <doctest/doctest.h>

#include "util/terminal.hpp"

using scalebench::util::needs_terminal_view;
using scalebench::util::terminal_view;

TEST_CASE("terminal view: plain text is itself") {
  CHECK_FALSE(needs_terminal_view("Epoch 1/3"));
  CHECK(terminal_view("Epoch 1/3") == "Epoch 1/3");
  CHECK(terminal_view("") == "");
  CHECK(needs_terminal_view("a\rb"));
  CHECK(needs_terminal_view("\x1b[1m"));
}

TEST_CASE("terminal view: carriage returns and backspaces redraw the line") {
  // Keras's dynamic display: backspaces over the previous width, \r, the new text.
  CHECK(terminal_view("1/3 a\b\b\b\b\b\r2/3 b\b\b\b\b\b\r3/3 c") == "3/3 c");
  // A shorter redraw leaves the old tail visible, as on a screen...
  CHECK(terminal_view("12345\rab") == "ab345");
  // ...unless the program pads or erases it.
  CHECK(terminal_view("12345\rab   ") == "ab");
  CHECK(terminal_view("12345\rab\x1b[K") == "ab");
  CHECK(terminal_view("12345\r\x1b[2Kab") == "ab");
  CHECK(terminal_view("abc\b\bX") == "aXc");
  CHECK(terminal_view("\b\b\bx") == "x");  // backspace stops at column 0
}

TEST_CASE("terminal view: colours, titles and other escapes print nothing") {
  CHECK(terminal_view("\x1b[1m43/43\x1b[0m \x1b[32m━━\x1b[0m\x1b[37m━\x1b[0m 4s") ==
        "43/43 ━━━ 4s");
  CHECK(terminal_view("\x1b]0;title\ax") == "x");
  CHECK(terminal_view("\x1b]0;title\x1b\\x") == "x");
  CHECK(terminal_view("a\x1b[3Gb") == "a b");  // column 3
  CHECK(terminal_view("abc\x1b[2Dz") == "azc");
  CHECK(terminal_view("a\tb") == "a       b");
  CHECK(terminal_view("a\x01\x7f b") == "a b");
  CHECK(terminal_view("unterminated \x1b[") == "unterminated");
}

TEST_CASE("terminal view: one column per code point") {
  // U+2501 (━) is three bytes: a backspace must step over all of them.
  CHECK(terminal_view("━━━\b\bx") == "━x━");
}
