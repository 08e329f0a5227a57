#include "x_keyboard.h"

#include <X11/Xlib.h>
#include <X11/extensions/XTest.h>
#include <X11/keysym.h>

namespace samplescope::bench {

namespace {
Display* dpy(void* display) { return static_cast<Display*>(display); }
}  // namespace

XKeyboard::XKeyboard() : display_(XOpenDisplay(nullptr)) {}

XKeyboard::~XKeyboard() {
    if (display_) XCloseDisplay(dpy(display_));
}

bool XKeyboard::usable() const {
    int event_base = 0, error_base = 0, major = 0, minor = 0;
    return display_ && XTestQueryExtension(dpy(display_), &event_base, &error_base, &major, &minor);
}

std::chrono::steady_clock::time_point XKeyboard::tap(Key key) {
    const KeyCode code = XKeysymToKeycode(dpy(display_), key == Key::Left ? XK_Left : XK_Right);
    const auto sent = std::chrono::steady_clock::now();
    XTestFakeKeyEvent(dpy(display_), code, True, CurrentTime);
    XTestFakeKeyEvent(dpy(display_), code, False, CurrentTime);
    XFlush(dpy(display_));
    return sent;
}

}  // namespace samplescope::bench
