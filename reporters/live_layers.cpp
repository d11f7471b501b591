#include "live_layers.h"

#include <fmt/format.h>

#include "terminal_reporter.h"
#include "verdict/json_read.h"

namespace kd {

LiveLayers::LiveLayers(std::vector<LayerInfo> layers, std::FILE* out, bool tty, bool colour)
    : layers_(std::move(layers)), out_(out), tty_(tty), colour_(colour) {}

const LayerInfo* LiveLayers::layer_of(const std::string& suite) const {
  for (const auto& l : layers_)
    if (l.suite == suite) return &l;
  return nullptr;
}

void LiveLayers::write(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

void LiveLayers::close_current() {
  if (!current_) return;
  const std::string line = render_layer_line(layer_entry(*current_, events_), colour_);
  write((progress_shown_ ? "\r\033[K" : "") + line);
  progress_shown_ = false;
  current_ = nullptr;
  events_.clear();
}

void LiveLayers::on_event(const nlohmann::json& ev) {
  // The worker's events are checked, not trusted: a field of another type reads as absent.
  const std::string kind = json_read::text(ev, "ev");
  if (kind == "end") return close_current();
  if (kind != "test_start" && kind != "test_end") return;
  const LayerInfo* layer = layer_of(json_read::text(ev, "suite"));
  if (!layer) return;
  if (layer != current_) {
    close_current();
    current_ = layer;
  }
  if (kind == "test_end") {
    events_.push_back(ev);
    return;
  }
  // A long layer (L4-L7 take seconds) shows which test runs now; a pipe gets the finished lines only.
  if (tty_)
    write(fmt::format("\r\033[K  {:<3} {:<20} running {} ({} done)", layer->id, layer->title, json_read::text(ev, "test"),
                      events_.size()));
  progress_shown_ = tty_;
}

void LiveLayers::finish() { close_current(); }

}  // namespace kd
