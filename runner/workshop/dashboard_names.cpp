// Participants' names on the dashboard (docs/workshop.md, "The dashboard in a room"): how a name
// is folded before the room sees it, which scripts a name may be written in, and the Latin
// skeleton (in the spirit of Unicode's UTS #39) by which two names are the same person.

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "common/strings.h"
#include "workshop/dashboard_confusables.h"
#include "workshop/dashboard_door.h"

namespace pgslow::workshop {

namespace {

// The code points of valid UTF-8 `s`.
std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    auto c = static_cast<char32_t>(static_cast<unsigned char>(s[i]));
    if (len > 1) c &= (0xFFu >> (len + 1));
    for (std::size_t k = 1; k < len; ++k)
      c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
    out.push_back(c);
    i += std::max<std::size_t>(len, 1);
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool in_range(char32_t c, char32_t first, char32_t last) {
  return c >= first && c <= last;
}

// Characters that show nothing: zero-width spaces and joiners, direction marks and overrides,
// the soft hyphen, variation selectors, Hangul fillers, Mongolian selectors, invisible musical
// formatting, the byte order mark, tags.
bool invisible(char32_t c) {
  return c == 0xAD || c == 0x34F || c == 0x61C || c == 0x115F || c == 0x1160 || c == 0x17B4 ||
         c == 0x17B5 || in_range(c, 0x180B, 0x180F) || in_range(c, 0x200B, 0x200F) ||
         in_range(c, 0x202A, 0x202E) || in_range(c, 0x2060, 0x206F) || c == 0x3164 ||
         in_range(c, 0xFE00, 0xFE0F) || c == 0xFEFF || c == 0xFFA0 ||
         in_range(c, 0x1D173, 0x1D17A) || in_range(c, 0xE0000, 0xE0FFF);
}

// Characters that show as a space (the blank Braille pattern too).
bool wide_space(char32_t c) {
  return c == 0xA0 || c == 0x1680 || in_range(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x2800 || c == 0x3000;
}

// Combining accents and overlays of any letter: the key reads a name without them.
bool combining_mark(char32_t c) {
  return in_range(c, 0x300, 0x36F) || in_range(c, 0x1AB0, 0x1AFF) || in_range(c, 0x1DC0, 0x1DFF) ||
         in_range(c, 0x20D0, 0x20FF) || in_range(c, 0xFE20, 0xFE2F);
}

// Styled alphabets: a run of code points that draw `count` letters or digits from `to` on in
// another style (full-width, mathematical bold, italic, script, ..., circled, parenthesized,
// squared, negative, regional indicators, segmented digits).
struct Styled {
  char32_t first;
  char32_t count;
  char32_t to;
};

const std::vector<Styled>& styled_alphabets() {
  static const std::vector<Styled> kStyled = [] {
    std::vector<Styled> s = {
        {0xFF21, 26, 'A'},   {0xFF41, 26, 'a'},   {0xFF10, 10, '0'},   {0x24B6, 26, 'A'},
        {0x24D0, 26, 'a'},   {0x249C, 26, 'a'},   {0x2460, 9, '1'},    {0x24EA, 1, '0'},
        {0x2474, 9, '1'},    {0x2488, 9, '1'},    {0x24F5, 9, '1'},    {0x24FF, 1, '0'},
        {0x2776, 9, '1'},    {0x2780, 9, '1'},    {0x278A, 9, '1'},    {0x1F100, 1, '0'},
        {0x1F101, 10, '0'},  {0x1F110, 26, 'A'},  {0x1F130, 26, 'A'},  {0x1F150, 26, 'A'},
        {0x1F170, 26, 'A'},  {0x1F1E6, 26, 'A'},  {0x1FBF0, 10, '0'},  {0x1D6A4, 1, 0x131},
        {0x1D6A5, 1, 0x237}, {0x1D7CA, 1, 0x3DC}, {0x1D7CB, 1, 0x3DD},
    };
    // Mathematical alphanumerics: 13 Latin alphabets of 52, 5 Greek of 58, 5 digit sets.
    for (char32_t k = 0; k < 13; ++k) {
      s.push_back({0x1D400 + 52 * k, 26, 'A'});
      s.push_back({0x1D41A + 52 * k, 26, 'a'});
    }
    for (char32_t k = 0; k < 5; ++k) {
      s.push_back({0x1D6A8 + 58 * k, 25, 0x391});  // Α..Ω (ϴ where Greek has no letter)
      s.push_back({0x1D6C2 + 58 * k, 25, 0x3B1});  // α..ω
      s.push_back({0x1D7CE + 10 * k, 10, '0'});
    }
    return s;
  }();
  return kStyled;
}

// The letter or digit a styled character draws, or `c` itself.
char32_t unstyled(char32_t c) {
  if (c < 0x2460) return c;
  for (const Styled& s : styled_alphabets()) {
    if (c >= s.first && c < s.first + s.count) {
      const char32_t to = s.to + (c - s.first);
      return to == 0x3A2 ? 0x398 : to;  // the capital theta symbol sits in Greek's gap
    }
  }
  return c;
}

// Regional indicators pair into flags: the page shows them as typed, the key reads letters.
bool flag_letter(char32_t c) {
  return in_range(c, 0x1F1E6, 0x1F1FF);
}

// The scripts a name may be written in: each has its look-alikes of Latin letters in
// kLookAlikeRuns. kCommon (digits, punctuation, symbols, emoji, combining marks) goes with any;
// kRefused is a script whose letters the room cannot check (Cherokee, Lisu, Canadian
// syllabics, Coptic, Tifinagh, Runic, ...: many are drawn like Latin letters).
enum Script : int {
  kRefused = -1,
  kCommon = 0,
  kLatin,
  kGreek,
  kCyrillic,
  kArmenian,
  kGeorgian,
  kHebrew,
  kArabic,
  kThai,
  kLao,
  kTibetan,
  kMyanmar,
  kEthiopic,
  kKhmer,
  kCjk,         // Han, kana, Hangul and Bopomofo: written together
  kIndic = 100  // + the block: Devanagari, Bengali, ..., Sinhala
};

int script_of(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? kLatin : kCommon;
  if (in_range(c, 0xA0, 0xBF) || c == 0xD7 || c == 0xF7 || in_range(c, 0x2B9, 0x2DF) ||
      in_range(c, 0x2E5, 0x2FF) || combining_mark(c))
    return kCommon;
  if (in_range(c, 0xC0, 0x2B8) || in_range(c, 0x2E0, 0x2E4) || in_range(c, 0x1D00, 0x1D25) ||
      in_range(c, 0x1D2C, 0x1D5C) || in_range(c, 0x1D62, 0x1D65) || in_range(c, 0x1D6B, 0x1D77) ||
      in_range(c, 0x1D79, 0x1DBE) || in_range(c, 0x1E00, 0x1EFF) || in_range(c, 0x2C60, 0x2C7F) ||
      in_range(c, 0xA720, 0xA7FF) || in_range(c, 0xAB30, 0xAB5A) || in_range(c, 0xAB5C, 0xAB64) ||
      in_range(c, 0xAB66, 0xAB69) || in_range(c, 0xFB00, 0xFB06) || in_range(c, 0x10780, 0x107BF) ||
      in_range(c, 0x1DF00, 0x1DFFF))
    return kLatin;
  if ((in_range(c, 0x370, 0x3FF) && !in_range(c, 0x3E2, 0x3EF)) || in_range(c, 0x1D26, 0x1D2A) ||
      in_range(c, 0x1D5D, 0x1D61) || in_range(c, 0x1D66, 0x1D6A) || c == 0x1DBF ||
      in_range(c, 0x1F00, 0x1FFF) || c == 0xAB65)
    return kGreek;
  if (in_range(c, 0x400, 0x52F) || in_range(c, 0x1C80, 0x1C8F) || c == 0x1D2B || c == 0x1D78 ||
      in_range(c, 0x2DE0, 0x2DFF) || in_range(c, 0xA640, 0xA69F) || in_range(c, 0x1E030, 0x1E08F))
    return kCyrillic;
  if (in_range(c, 0x531, 0x58F) || in_range(c, 0xFB13, 0xFB17)) return kArmenian;
  if (in_range(c, 0x591, 0x5FF) || in_range(c, 0xFB1D, 0xFB4F)) return kHebrew;
  if (in_range(c, 0x600, 0x6FF) || in_range(c, 0x750, 0x77F) || in_range(c, 0x870, 0x8FF) ||
      in_range(c, 0xFB50, 0xFDFF) || in_range(c, 0xFE70, 0xFEFE) || in_range(c, 0x1EE00, 0x1EEFF))
    return kArabic;
  if (in_range(c, 0x900, 0xDFF)) return kIndic + static_cast<int>((c - 0x900) / 0x80);
  if (in_range(c, 0xA8E0, 0xA8FF)) return kIndic;  // Devanagari extended
  if (in_range(c, 0xE00, 0xE7F)) return kThai;
  if (in_range(c, 0xE80, 0xEFF)) return kLao;
  if (in_range(c, 0xF00, 0xFFF)) return kTibetan;
  if (in_range(c, 0x1000, 0x109F) || in_range(c, 0xA9E0, 0xA9FF) || in_range(c, 0xAA60, 0xAA7F))
    return kMyanmar;
  if (in_range(c, 0x10A0, 0x10FF) || in_range(c, 0x1C90, 0x1CBF) || in_range(c, 0x2D00, 0x2D2F))
    return kGeorgian;
  if (in_range(c, 0x1200, 0x139F) || in_range(c, 0x2D80, 0x2DDF) || in_range(c, 0xAB00, 0xAB2F))
    return kEthiopic;
  if (in_range(c, 0x1780, 0x17FF) || in_range(c, 0x19E0, 0x19FF)) return kKhmer;
  if (in_range(c, 0x1100, 0x11FF) || in_range(c, 0x2E80, 0x2FDF) || in_range(c, 0x3040, 0x31FF) ||
      in_range(c, 0x3400, 0x4DBF) || in_range(c, 0x4E00, 0x9FFF) || in_range(c, 0xA960, 0xA97F) ||
      in_range(c, 0xAC00, 0xD7FF) || in_range(c, 0xF900, 0xFAFF) || in_range(c, 0xFF66, 0xFFDC) ||
      in_range(c, 0x1B000, 0x1B16F) || in_range(c, 0x20000, 0x3134F))
    return kCjk;
  // Punctuation, symbols, arrows, shapes, emoji and the styled alphabets: they go with any
  // script (a styled letter is folded, or compared as the letter it draws).
  if (in_range(c, 0x2000, 0x2BFF) || in_range(c, 0x2E00, 0x2E7F) || in_range(c, 0x3000, 0x303F) ||
      in_range(c, 0x3200, 0x33FF) || in_range(c, 0xFE10, 0xFE1F) || in_range(c, 0xFE30, 0xFE6F) ||
      in_range(c, 0xFF01, 0xFF65) || in_range(c, 0xFFE0, 0xFFEE) || in_range(c, 0x1D400, 0x1D7FF) ||
      in_range(c, 0x1F000, 0x1FBFF))
    return kCommon;
  return kRefused;
}

// The Latin letter or digit `c` passes for (lower case), or 0.
char looks_like(char32_t c) {
  const auto* end = std::end(kLookAlikeRuns);
  const auto* run = std::upper_bound(std::begin(kLookAlikeRuns), end, c,
                                     [](char32_t v, const LookAlikeRun& r) { return v < r.first; });
  if (run == std::begin(kLookAlikeRuns)) return 0;
  --run;
  return c <= run->last ? run->latin : 0;
}

// The small letter of a capital of the scripts that have case (Latin, Greek, Cyrillic,
// Armenian, Georgian), for what kLookAlikeRuns leaves as it is.
char32_t small_letter(char32_t c) {
  const bool even = c % 2 == 0;
  if (in_range(c, 'A', 'Z') || in_range(c, 0xC0, 0xDE)) return c == 0xD7 ? c : c + 0x20;
  if (in_range(c, 0x100, 0x12F) || in_range(c, 0x132, 0x137) || in_range(c, 0x14A, 0x177) ||
      in_range(c, 0x1DE, 0x1EF) || in_range(c, 0x1F8, 0x21F) || in_range(c, 0x222, 0x233) ||
      in_range(c, 0x246, 0x24F) || in_range(c, 0x1E00, 0x1E95) || in_range(c, 0x1EA0, 0x1EFF) ||
      in_range(c, 0x3D8, 0x3EF) || in_range(c, 0x460, 0x481) || in_range(c, 0x48A, 0x4BF) ||
      in_range(c, 0x4D0, 0x52F) || in_range(c, 0xA640, 0xA66D) || in_range(c, 0xA680, 0xA69B) ||
      in_range(c, 0xA722, 0xA76F) || in_range(c, 0xA77E, 0xA787) || in_range(c, 0xA790, 0xA793) ||
      in_range(c, 0xA796, 0xA7A9) || in_range(c, 0xA7B4, 0xA7C3))
    return even ? c + 1 : c;
  if (in_range(c, 0x139, 0x148) || in_range(c, 0x179, 0x17E) || in_range(c, 0x1CD, 0x1DC) ||
      in_range(c, 0x4C1, 0x4CE))
    return even ? c : c + 1;
  if (c == 0x178) return 0xFF;
  if (c == 0x4C0) return 0x4CF;
  if (in_range(c, 0x391, 0x3AB)) return c + 0x20;
  if (c == 0x386) return 0x3AC;
  if (in_range(c, 0x388, 0x38A)) return c + 0x25;
  if (c == 0x38C) return 0x3CC;
  if (in_range(c, 0x38E, 0x38F)) return c + 0x3F;
  if ((in_range(c, 0x1F08, 0x1F6F) || in_range(c, 0x1F88, 0x1FAF)) && (c & 0xF) >= 8) return c - 8;
  if (in_range(c, 0x400, 0x40F)) return c + 0x50;
  if (in_range(c, 0x410, 0x42F)) return c + 0x20;
  if (in_range(c, 0x531, 0x556)) return c + 0x30;
  if (in_range(c, 0x10A0, 0x10C5)) return c - 0x10A0 + 0x2D00;
  if (in_range(c, 0x1C90, 0x1CBF)) return c - 0x1C90 + 0x10D0;  // Mtavruli
  return c;
}

}  // namespace

std::optional<std::string> room_name(const std::string& text, std::size_t max_bytes,
                                     std::string* why) {
  const std::optional<std::string> clean = room_text(text, max_bytes);
  if (!clean) {
    if (why != nullptr) *why = "the name must be UTF-8 text";
    return std::nullopt;
  }
  std::string out;
  std::set<int> scripts;
  for (char32_t c : code_points(*clean)) {
    if (invisible(c)) continue;
    if (wide_space(c)) c = ' ';
    if (c >= 0xFF01 && c <= 0xFF5E) c = c - 0xFF01 + '!';  // full-width ASCII
    if (!flag_letter(c)) c = unstyled(c);  // "𝐛𝐨𝐛", "ⓑⓞⓑ" are shown as the letters they draw
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    const int script = script_of(c);
    if (script == kRefused) {
      if (why != nullptr) {
        *why =
            "the name holds letters of a script whose look-alikes the room cannot check (such "
            "as Cherokee): write it in Latin, Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic, "
            "an Indic script, Thai, Lao, Tibetan, Myanmar, Ethiopic, Khmer or CJK letters";
      }
      return std::nullopt;
    }
    if (script != kCommon) scripts.insert(script);
    append_utf8(out, c);
  }
  if (scripts.size() > 1) {
    if (why != nullptr) {
      *why =
          "the name mixes letters of two scripts (some look alike, as Latin, Cyrillic and Greek "
          "do): write it in one alphabet";
    }
    return std::nullopt;
  }
  return trim(out);
}

std::string room_name_key(const std::string& name) {
  std::string folded;
  for (char32_t c : code_points(name)) {
    if (invisible(c) || combining_mark(c) || wide_space(c) || c == ' ') continue;
    if (c >= 0xFF01 && c <= 0xFF5E) c = c - 0xFF01 + '!';
    c = unstyled(c);
    if (const char latin = looks_like(c); latin != 0) c = static_cast<unsigned char>(latin);
    c = small_letter(c);
    if (const char latin = looks_like(c); latin != 0) c = static_cast<unsigned char>(latin);
    if (c == 'i' || c == '1' || c == '|') c = 'l';  // "I" and "l" are drawn alike in most fonts
    if (c == '0') c = 'o';
    append_utf8(folded, c);
  }
  std::string key;
  for (std::size_t i = 0; i < folded.size(); ++i) {
    if (folded.compare(i, 2, "rn") == 0) {
      key += 'm';
      ++i;
    } else if (folded.compare(i, 2, "vv") == 0) {
      key += 'w';
      ++i;
    } else {
      key += folded[i];
    }
  }
  return key;
}

}  // namespace pgslow::workshop
