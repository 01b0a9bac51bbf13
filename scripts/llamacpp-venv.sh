# Sourced by the llama.cpp comparison scripts: makes $venv, a Python environment with
# llama-cpp-python built from source with its Vulkan backend, once, under $cache.
# Needs $cache set by the caller.
venv="$cache/llamacpp-venv"
# 0.3.8 vendors a llama.cpp (early 2025) whose Vulkan backend builds with Debian 12's
# Vulkan 1.3.239 headers; later releases need newer headers.
llamacpp_version="0.3.8"
if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
    echo "llama.cpp: building llama-cpp-python $llamacpp_version with Vulkan into $venv (once)" >&2
    for p in glslang-tools python3-venv; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || \
            { apt-get install -y -qq "$p" >/dev/null || { echo "need Debian package $p" >&2; exit 1; }; }
    done
    python3 -m venv "$venv"
    CMAKE_ARGS="-DGGML_VULKAN=on -DGGML_NATIVE=on" "$venv/bin/pip" install -q --no-cache-dir \
        "llama-cpp-python==$llamacpp_version" numpy || { echo "llama.cpp: could not build llama-cpp-python" >&2; exit 1; }
fi
