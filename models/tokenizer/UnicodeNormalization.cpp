#include "models/tokenizer/UnicodeNormalization.hpp"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <algorithm>
#include <climits>
#include <vector>

namespace inferscope::models::detail {

std::string composeNfc(std::string_view utf8) {
    const bool ascii = std::all_of(utf8.begin(), utf8.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii || utf8.size() > static_cast<std::size_t>(INT_MAX / 4)) return std::string(utf8);

    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
    if (U_FAILURE(status)) return std::string(utf8);

    // UTF-8 -> UTF-16 (a code unit per byte at most); ill-formed input fails here.
    std::vector<UChar> source(utf8.size() + 1);
    int32_t sourceLength = 0;
    u_strFromUTF8(source.data(), static_cast<int32_t>(source.size()), &sourceLength, utf8.data(),
                  static_cast<int32_t>(utf8.size()), &status);
    if (U_FAILURE(status)) return std::string(utf8);

    // Composition never lengthens UTF-16 text by more than a factor of three (a few
    // singletons decompose and stay longer); ICU reports the size it needed if it does.
    std::vector<UChar> composed(static_cast<std::size_t>(sourceLength) * 3 + 1);
    int32_t composedLength = unorm2_normalize(nfc, source.data(), sourceLength, composed.data(),
                                              static_cast<int32_t>(composed.size()), &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) {
        status = U_ZERO_ERROR;
        composed.resize(static_cast<std::size_t>(composedLength) + 1);
        composedLength = unorm2_normalize(nfc, source.data(), sourceLength, composed.data(),
                                          static_cast<int32_t>(composed.size()), &status);
    }
    if (U_FAILURE(status)) return std::string(utf8);

    std::string out(static_cast<std::size_t>(composedLength) * 3, '\0');
    int32_t outLength = 0;
    u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &outLength, composed.data(),
                composedLength, &status);
    if (U_FAILURE(status)) return std::string(utf8);
    out.resize(static_cast<std::size_t>(outLength));
    return out;
}

} // namespace inferscope::models::detail
