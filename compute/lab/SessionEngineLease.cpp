#include "compute/lab/SessionEngineLease.hpp"

#include "compute/lab/LabContext.hpp"

namespace inferscope::compute {

SessionEngineLease::SessionEngineLease(LabContext& lab, Engine& engine)
    : lab_(lab), engine_(engine), session_(lab.backend()), format_(engine.weightFormat()),
      headFormat_(engine.options().headFormat), probes_(engine.probes()), cached_(engine.cached()),
      kvTokens_(engine.options().kvCapacityTokens) {}

SessionEngineLease::~SessionEngineLease() {
    try {
        giveBack();
    } catch (...) {
        // Unwinding already (a cancel or an error): that error is the one reported.
    }
}

DecoderBackend& SessionEngineLease::repack(WeightFormat format,
                                           std::optional<WeightFormat> headFormat,
                                           std::optional<std::uint32_t> kvTokens) {
    repacked_ = true;
    engine_.setProbes({}); // measurements, not profiles
    engine_.setCached(true);
    if (kvTokens) engine_.setKvCapacity(*kvTokens); // before the weights grow
    engine_.setWeightFormat(format, headFormat);
    session_.reset();
    return session_;
}

void SessionEngineLease::giveBack() {
    if (!repacked_) return;
    repacked_ = false;
    engine_.setWeightFormat(format_, headFormat_);
    engine_.setKvCapacity(kvTokens_); // after the lab's weights are gone
    engine_.setProbes(probes_);
    engine_.setCached(cached_);
    session_.reset();
    lab_.engineRepacked();
}

} // namespace inferscope::compute
