# Shared by scripts/setup, scripts/build, scripts/run and scripts/test. Sourced, not run.
KD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KD_BUILD=${KD_BUILD_DIR:-$KD_ROOT/build}
KD_DEPS=$KD_ROOT/.deps
KD_PINNED_TORCH=torch==2.11.0

say() { printf 'kernodeck: %s\n' "$*" >&2; }

# scripts/build holds this lock while it configures and builds $KD_BUILD: two builds of one folder at once
# (a run beside scripts/run's background build) would break ninja's logs.
build_lock() { echo "$KD_BUILD/.kd-build.lock"; }
build_running() { [ -f "$(build_lock)" ] && ! flock -n "$(build_lock)" true; }
die() { say "error: $*"; exit 1; }

# show_usage_on_help "$@": for -h or --help, prints the calling script's opening comment (its usage) and exits 0,
# before the script builds or runs anything.
show_usage_on_help() {
  case "${1:-}" in -h | --help) ;; *) return 0 ;; esac
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
  exit 0
}

# The distribution, from /etc/os-release: Debian 12 and Ubuntu 22.04/24.04 (the images GPU machines are
# usually rented with) name every package below the same way.
distribution_id() { (. /etc/os-release 2>/dev/null && echo "${ID:-unknown}") || echo unknown; }
distribution() { (. /etc/os-release 2>/dev/null && echo "${NAME:-Linux} ${VERSION_ID:-}") || echo Linux; }

# Debian/Ubuntu packages the build and the tool's tests need.
KD_PACKAGES=(cmake g++ ninja-build libgtest-dev libfmt-dev nlohmann-json3-dev python3-jsonschema python3-venv python3-yaml ccache libxml2-utils)

missing_packages() {
  local p out=()
  for p in "${KD_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || out+=("$p")
  done
  echo "${out[@]}"
}

# ccache keys on paths; with these a compile in another clone of the tree (CI's fresh clone, a second
# build folder) finds what this one compiled: paths under the tree are hashed relative to it, and the
# build folder's name (written into -g's debug info) is left out of the key.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$KD_ROOT} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
