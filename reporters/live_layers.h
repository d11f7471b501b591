// The terminal while the worker runs: one line per layer as it finishes (the same line the
// final report would show), and on a terminal a progress line for the layer in progress that
// the next line overwrites. Fed the worker's events in the order they arrive.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "contract/event_types.h"
#include "report_builder.h"

namespace kd {

class LiveLayers {
 public:
  // tty: the stream is a terminal (progress lines are drawn and overwritten); colour as in TerminalView.
  LiveLayers(std::vector<LayerInfo> layers, std::FILE* out, bool tty, bool colour);
  void on_event(const events::Event& ev);
  void finish();  // the layer in progress when the worker ended (a crash, a timeout) gets its line too

 private:
  const LayerInfo* layer_of(const std::string& suite) const;
  void close_current();
  void write(const std::string& text);

  std::vector<LayerInfo> layers_;
  std::FILE* out_;
  bool tty_, colour_;
  const LayerInfo* current_ = nullptr;
  std::vector<events::TestEnd> ended_;  // the current layer's tests that ended
  bool progress_shown_ = false;
};

}  // namespace kd
