// Declarations only: see probe/gloo_names/README.md.
#pragma once
