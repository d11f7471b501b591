// Declarations only: see probe/gloo_names/README.md.
#pragma once
namespace gloo::transport {
class Device;
class UnboundBuffer;
}  // namespace gloo::transport
