// Types keys through an X server with XTest, on an X connection of its own
// (so the events reach the focused window exactly as a keyboard's would).
// Kept apart from Qt code: Xlib's macros (KeyPress, None, Bool) collide with Qt's names.
#pragma once

#include <chrono>

namespace samplescope::bench {

class XKeyboard {
public:
    enum class Key { Left, Right };

    XKeyboard();  // opens DISPLAY
    ~XKeyboard();
    XKeyboard(const XKeyboard&) = delete;
    XKeyboard& operator=(const XKeyboard&) = delete;

    // True when the display opened and has the XTest extension.
    bool usable() const;
    // Presses and releases the key, flushes, and returns the moment it was sent.
    std::chrono::steady_clock::time_point tap(Key key);

private:
    void* display_;  // Display*
};

}  // namespace samplescope::bench
