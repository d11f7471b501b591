#include "live_layers.h"

#include <fmt/format.h>

#include "terminal_reporter.h"

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
  const std::string line = render_layer_line(layer_entry(*current_, ended_), colour_);
  write((progress_shown_ ? "\r\033[K" : "") + line);
  progress_shown_ = false;
  current_ = nullptr;
  ended_.clear();
}

void LiveLayers::on_event(const events::Event& ev) {
  if (std::holds_alternative<events::End>(ev)) return close_current();
  const auto* started = std::get_if<events::TestStart>(&ev);
  const auto* ended = std::get_if<events::TestEnd>(&ev);
  if (!started && !ended) return;
  const LayerInfo* layer = layer_of(started ? started->suite : ended->suite);
  if (!layer) return;
  if (layer != current_) {
    close_current();
    current_ = layer;
  }
  if (ended) {
    ended_.push_back(*ended);
    return;
  }
  // A long layer (L4-L7 take seconds) shows which test runs now; a pipe gets the finished lines only.
  if (tty_)
    write(fmt::format("\r\033[K  {:<3} {:<20} running {} ({} done)", layer->id, layer->title, started->test,
                      ended_.size()));
  progress_shown_ = tty_;
}

void LiveLayers::finish() { close_current(); }

}  // namespace kd
