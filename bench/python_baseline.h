// Finds a Python interpreter for a baseline script: the first `python3` on
// PATH that can import the module, else Debian's /usr/bin/python3 (where
// python3-numpy and python3-torch install). Empty when neither can.
#pragma once

#include <cstdlib>
#include <string>

namespace samplescope::bench {

inline std::string python_with(const std::string& module) {
    for (const std::string python : {"python3", "/usr/bin/python3"}) {
        const std::string probe = python + " -c 'import " + module + "' >/dev/null 2>&1";
        if (std::system(probe.c_str()) == 0) return python;
    }
    return {};
}

}  // namespace samplescope::bench
