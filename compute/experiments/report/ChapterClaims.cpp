// The chapter's figures, one per item of DESIGN.md's list, quoted from
// ../shared/chapter-make-inference-cheap.da.txt (the chapter has no numbered sections: each
// claim names the passage it comes from by its subject).
#include "compute/experiments/report/ClassReport.hpp"

namespace inferscope::compute::experiments {

const std::vector<ChapterClaim>& chapterClaims() {
    static const std::vector<ChapterClaim> claims{
        {1, "Cached vs uncached generation", "KV cache: the cache and the single attention head",
         "Dette er ikke en approximation \u2014 den identiske-output-kontrol ovenfor er pointen. "
         "[...] ved 4.096 tokens, 67 MB scores mod 16 KB.",
         "The cache changes no token (identical output) and removes redundant arithmetic; the "
         "uncached run was nine times slower over 48 tokens. One head with d = 64: at n = 4,096 "
         "recomputing builds 67 MB of n x n scores, the cached step a 16 KB row."},
        {2, "Multiply-accumulates for T generated tokens",
         "KV cache: counting multiply-accumulates",
         "Per trin er den cached version line\u00e6r i context, og den uncached er kvadratisk; "
         "summeret over en generation, O(T^2) mod O(T^3), hvor forholdet vokser uden gr\u00e6nse.",
         "Summed over a generation the cached run costs O(T^2) MACs and the uncached O(T^3): "
         "their ratio grows without bound as T grows."},
        {3, "Peak memory beyond the weights", "KV cache: what must be in memory",
         "8,3 gange mere hukommelse, brugt p\u00e5 at producere de samme tokens langsommere.",
         "Generating 256 tokens in fp16 on an 8 GB laptop GPU, the uncached run's peak memory "
         "minus the resident weights is 8.3 times the cached run's."},
        {4, "Prefill vs decode", "Prefill and decode: two phases",
         "At g\u00e5 fra 16 tokens context til 1.024 [...] \u00e6ndrede omkostningen ved et trin "
         "med intet m\u00e5lbart.",
         "Prefill cost 25.6 ms per prompt token and a decode step 166 ms: prompt tokens are the "
         "cheap part. A decode step's cost is flat from C = 16 to C = 1,024 cached tokens: "
         "reading the weights dominates."},
        {5, "KV cache bytes per token", "The KV cache formula, checked against the allocator",
         "measured: 3,624,960 bytes for 295 tokens = 12,288 bytes/token / formula : "
         "2 * 24 * 2 * 64 * 2 = 12,288 bytes/token",
         "KV bytes per token = 2 x layers x KV heads x head dim x bytes: 12,288 for 24 layers, 2 "
         "KV heads of 64 in fp16, and the allocator agrees exactly. With full multi-head "
         "attention (14 KV heads) it would be 86,016, seven times more."},
        {6, "Batched decode and its knee", "Batching",
         "At g\u00e5 fra \u00e9n request til seksten multiplicerer throughput med 6,0 og "
         "multiplicerer ventetiden [...] med 2,67. [...] Fra 16 til 32 stiger throughput 9 %.",
         "With a 64-token cache per request, B = 16 gives 6.0x the throughput of B = 1 and 2.67x "
         "each request's latency; from 16 to 32 throughput rises only 9 %: the knee, where the "
         "step turns compute-bound."},
        {7, "Static vs continuous batching", "Batching: static groups and continuous slots",
         "Tag 64 requests [...] median 18 tokens, l\u00e6ngste 231, 1.874 i alt [...] Throughput "
         "forbedres med 1,6x. Gennemsnitlig latency forbedres med mere end ti gange.",
         "64 requests (median 18 tokens, longest 231, 1,874 in all) on eight slots: continuous "
         "batching gives 1.6x the throughput of static batching and more than ten times lower "
         "mean latency; paged blocks let sequences share a common prefix."},
        {8, "Weight quantization error", "Quantizing the weights",
         "En relativ fejl p\u00e5 0,99 p\u00e5 den v\u00e6rste matrix [...] Per outputr\u00e6kke "
         "dividerer fejlen med 3,4 [...] den m\u00e5lte fejl falder fra 0,1323 til 0,0952.",
         "INT4 with one scale per tensor collapses (worst matrix error 0.99); one scale per output "
         "row divides the error by 3.4; groups of 128 cost 4.125 bits per weight; NF4 (4.25 bits) "
         "cuts group-128's error from 0.1323 to 0.0952, 28 % lower. The worst matrix has "
         "max/std 24.1."},
        {9, "Activation outliers", "Outlier features in the residual stream",
         "Dimension 62 n\u00e5r 1.579,6, mens mediandimensionen aldrig overstiger 1,6. [...] den "
         "samme dimension er der ved lag 4 og stadig ved lag 20.",
         "Over an 84-token prompt one dimension of 896 reaches max |h| 1,579.6 while the median "
         "dimension stays under 1.6, about 1,000x; the same dimension stands out from layer 4 to "
         "layer 20."},
        {10, "INT8 levels of the activations", "Quantizing the activations",
         "Fjorten niveauer ud af 256. [...] after excluding the top 4 dimensions, scale = 0.5749 "
         "(22x smaller)",
         "With one tensor-wide INT8 scale the activations use 14 of 256 levels, whole dimensions "
         "one level; excluding the top 4 outlier dimensions makes the scale 22x smaller."},
        {11, "Quality of each scheme", "Does quality survive?",
         "Per-r\u00e6kke INT8 scorer 22,96 mod referencens 23,08 [...] per-tensor 365.416.000, "
         "per-r\u00e6kke 46,18, per-gruppe-p\u00e5-128 31,08, NF4 24,55.",
         "Perplexity: reference 23.08, INT8 per row 22.96 (free), INT4 per tensor 365 million "
         "(destroyed), per row 46.18, group-128 31.08, NF4 24.55; INT8 per row agrees with full "
         "precision on 142 of 144 tokens."},
        {12, "Speculative decoding", "Speculative decoding",
         "Ved 90 % acceptance er \u03b3 = 8 3,40x v\u00e6rd, og ved 30 % er den 0,79x v\u00e6rd.",
         "Expected tokens per verification (1 - alpha^(g+1)) / (1 - alpha), net speed-up that "
         "divided by (g c + 1): alpha 0.9, g = 8, c = 0.1 gives 3.40x; at alpha 0.3 the same "
         "draft is 0.79x, slower."},
        {13, "Soft labels and temperature", "Distillation",
         "forholdet mellem den \u00f8verste token og den tredje [falder] fra 2,24 ved T = 1 til "
         "1,50 ved T = 2 \u2014 kvadratroden af den f\u00f8rste.",
         "After \"She poured the milk into the\" the top-1 / top-3 probability ratio falls from "
         "2.24 at T = 1 to 1.50 at T = 2: dividing logits by T takes the T-th root of every "
         "ratio."},
        {14, "Memory budget", "Everything is one sum",
         "Den har 337 tokens context [...] 7B f\u00e5r 65.378 tokens, og 13B f\u00e5r 3.136.",
         "A 13B model (MHA) whose weights fit an 8 GB card (6.2 GB of 8) has 337 tokens of "
         "context; on 16 GB in int8 the 7B class (GQA) holds 65,378 tokens and the 13B 3,136, "
         "because their KV costs "
         "128 KB and 800 KB per token."},
    };
    return claims;
}

} // namespace inferscope::compute::experiments
