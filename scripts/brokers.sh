# shellcheck shell=bash disable=SC2034,SC2119,SC2120
# (SC2034: the variables are for callers; SC2119/SC2120: optional arguments.)
#
# brokers.sh — shared set-up for real brokers and loopback captures.
#
# Source it from bash (it defines functions only, changes no shell options,
# and works under `set -euo pipefail`):
#
#   source "$(dirname "$0")/brokers.sh"
#   trap brokers_cleanup EXIT
#   install_broker_deps
#   start_mosquitto 1883                     # broker on 127.0.0.1:1883
#   start_capture lo "tcp port 1883" out.pcap
#   ... run clients (each under `timeout`) ...
#   stop_capture
#   stop_mosquitto
#
# Brokers and tcpdump are background children of the calling shell: wait for
# your own clients by pid (`wait $pid`), never with a bare `wait`, which would
# block until the brokers exit.
#
# Functions (all waits are bounded; each returns non-zero on failure):
#
#   install_broker_deps        apt: mosquitto mosquitto-clients tcpdump;
#                              pip (with $PYTHON, default python3): paho-mqtt
#                              (2.x, pinned) and pika. Installs only what is
#                              missing; apt-get update only if install fails.
#   install_rabbitmq_deps      apt: rabbitmq-server amqp-tools (optional, big).
#   start_mosquitto PORT [CONFDIR] [CONF_LINE...]
#                              writes CONFDIR/mosquitto-PORT.conf (CONFDIR
#                              defaults to a fresh temp dir), starts
#                              `mosquitto -c CONF` in the background, waits
#                              until that very process listens on
#                              127.0.0.1:PORT. Extra CONF_LINE arguments are
#                              appended to the config; an `allow_anonymous`
#                              line among them replaces the default `true`.
#                              Pid in MOSQUITTO_PIDS[PORT]; MOSQUITTO_PID is
#                              the last one started; log in CONFDIR.
#                              Log (log_type all) in MOSQUITTO_LOGS[PORT].
#   mosquitto_wait_log PORT REGEX [SECS] [COUNT]
#                              waits until that broker logged REGEX (e.g.
#                              'Sending SUBACK to CLIENTID'): a client is
#                              subscribed before anything is published.
#   stop_mosquitto [PORT]      stops the instance on PORT, or all of them.
#   start_rabbitmq [PORT]      rabbitmq-server on 127.0.0.1:PORT (default
#                              5672) as a node of its own, beside any RabbitMQ
#                              already running (the usual rabbit@localhost):
#                              node name $RABBITMQ_NODE (default
#                              pdbrokers-<shell pid>-<PORT>@localhost; the
#                              name in use is in RABBITMQ_NODE_NAME),
#                              distribution port $RABBITMQ_DIST_PORT (default:
#                              a free one, in RABBITMQ_DIST_PORT_IN_USE),
#                              a private cookie (HOME and
#                              -setcookie) and private mnesia/log/config
#                              files under a temp dir. It registers with the
#                              machine's epmd, starting one (loopback only)
#                              if none runs. Waits up to
#                              RABBITMQ_START_TIMEOUT (60) seconds, less if
#                              the node dies first; on failure prints the
#                              tail of the node's log.
#                              guest/guest, vhost "/" (amqp://guest:guest@127.0.0.1:5672).
#   rabbitmq_ctl ARGS...       rabbitmqctl against that node (e.g. list_queues).
#   stop_rabbitmq              rabbitmqctl stop, waits for the Erlang VM to
#                              exit (30 s), then TERM/KILL if needed; stops
#                              epmd only if start_rabbitmq started it and no
#                              other node is registered with it.
#   start_capture IFACE FILTER OUTFILE
#                              tcpdump -i IFACE -U -s 0 -w OUTFILE FILTER in
#                              the background; returns once tcpdump printed
#                              "listening on" (capture is armed). One capture
#                              at a time; pid in CAPTURE_PID.
#   stop_capture               lets late packets arrive, SIGINT, waits for
#                              tcpdump to exit so OUTFILE is complete; fails
#                              if tcpdump reports packets dropped by the kernel.
#   brokers_cleanup            stops everything this library started and
#                              removes its temp dirs: use it in an EXIT trap.
#   require_free_ports PORT... fails, saying how to run beside a broker of
#                              one's own, if something listens on one of the
#                              PORTs: for the scripts whose captures are made
#                              on the standard ports (1883, 5672).
#   wait_for_port PORT [SECS] [PID]
#                              waits until 127.0.0.1:PORT listens (owned by
#                              PID if given) without connecting to it.
#
# Temp dirs are /tmp/pd-brokers-*. Only 127.0.0.1 is ever listened on.
#
# Tunables (environment): PAHO_MQTT_VERSION, PIKA_VERSION, RABBITMQ_NODE, RABBITMQ_DIST_PORT,
# BROKERS_START_TIMEOUT (10 s), RABBITMQ_START_TIMEOUT (60 s),
# CAPTURE_SETTLE (1.5 s: pause before stopping a capture, see stop_capture),
# CAPTURE_BUFFER_KIB (32768: tcpdump -B), MOSQUITTO_LOG_TYPE (all; error for load runs).

PAHO_MQTT_VERSION=${PAHO_MQTT_VERSION:-2.1.0}
PIKA_VERSION=${PIKA_VERSION:-1.3.2}
BROKERS_START_TIMEOUT=${BROKERS_START_TIMEOUT:-10}
RABBITMQ_START_TIMEOUT=${RABBITMQ_START_TIMEOUT:-60}
CAPTURE_SETTLE=${CAPTURE_SETTLE:-1.5}

declare -gA MOSQUITTO_PIDS=()
declare -gA MOSQUITTO_CONFDIRS=()
declare -gA MOSQUITTO_LOGS=()
declare -ga _BROKERS_TMPDIRS=()
MOSQUITTO_PID=${MOSQUITTO_PID:-}
RABBITMQ_PID=${RABBITMQ_PID:-}
RABBITMQ_BEAM_PID=${RABBITMQ_BEAM_PID:-}
RABBITMQ_DIR=${RABBITMQ_DIR:-}
RABBITMQ_NODE_NAME=${RABBITMQ_NODE_NAME:-}
RABBITMQ_DIST_PORT_IN_USE=${RABBITMQ_DIST_PORT_IN_USE:-}
_RABBITMQ_COOKIE=
_RABBITMQ_STARTED_EPMD=
CAPTURE_PID=${CAPTURE_PID:-}
CAPTURE_FILE=${CAPTURE_FILE:-}
CAPTURE_LOG=${CAPTURE_LOG:-}

_brokers_log() { printf '[brokers] %s\n' "$*" >&2; }

# _brokers_tmpdir VAR TAG: a new temp dir, path into VAR, removed by
# brokers_cleanup. (Not printed: a $(...) subshell would lose the record.)
_brokers_tmpdir() {
    local -n _dir=$1
    _dir=$(mktemp -d "${TMPDIR:-/tmp}/pd-brokers-$2.XXXXXX") || return 1
    _BROKERS_TMPDIRS+=("$_dir")
}

# True while PID exists and is not a zombie (a dead child that has not been
# reaped still answers `kill -0`).
_pid_alive() {
    local pid=$1 state
    [[ -n $pid ]] || return 1
    state=$(awk '/^State:/ {print $2; exit}' "/proc/$pid/status" 2>/dev/null) || return 1
    [[ -n $state && $state != Z && $state != X ]]
}

# Waits up to SECS for PID to exit; true if it did.
_wait_gone() {
    local pid=$1 secs=$2 i
    for ((i = 0; i < secs * 10; i++)); do
        _pid_alive "$pid" || return 0
        sleep 0.1
    done
    ! _pid_alive "$pid"
}

# Sends SIGNAL to PID, waits up to SECS for it to exit, then SIGKILL; reaps it.
_stop_pid() {
    local pid=$1 sig=${2:-TERM} secs=${3:-10} i
    [[ -n $pid ]] || return 0
    if _pid_alive "$pid"; then
        kill -s "$sig" "$pid" 2>/dev/null || true
        for ((i = 0; i < secs * 10; i++)); do
            _pid_alive "$pid" || break
            sleep 0.1
        done
        if _pid_alive "$pid"; then
            _brokers_log "pid $pid ignored SIG$sig for ${secs}s, sending SIGKILL"
            kill -s KILL "$pid" 2>/dev/null || true
            sleep 0.2
        fi
    fi
    wait "$pid" 2>/dev/null || true
    return 0
}

# Is something listening on 127.0.0.1:PORT (or 0.0.0.0/[::]:PORT)? With PID,
# only if that process owns the socket. Uses ss, so it opens no connection
# (a probe connection would show up in captures).
_port_listening() {
    local port=$1 pid=${2:-} out
    out=$(ss -Hltnp "sport = :$port" 2>/dev/null) || return 1
    [[ -n $out ]] || return 1
    if [[ -n $pid ]]; then
        grep -q "pid=$pid," <<<"$out"
    fi
}

wait_for_port() {
    local port=$1 secs=${2:-$BROKERS_START_TIMEOUT} pid=${3:-} i
    for ((i = 0; i < secs * 10; i++)); do
        if [[ -n $pid ]] && ! _pid_alive "$pid"; then
            return 1
        fi
        _port_listening "$port" "$pid" && return 0
        sleep 0.1
    done
    return 1
}

require_free_ports() {
    local p busy=()
    for p in "$@"; do
        _port_listening "$p" && busy+=("$p")
    done
    ((${#busy[@]})) || return 0
    _brokers_log "127.0.0.1 port ${busy[*]} is in use (a broker of your own?), and this script's captures are made on it."
    _brokers_log "Run it in a network namespace of its own, whose lo and ports are private (what it installs must be there already):"
    _brokers_log "  sudo unshare --net sh -c 'ip link set lo up && SKIP_INSTALL=1 $0'"
    return 1
}

# ---------------------------------------------------------------- installs --

_apt_install() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    _brokers_log "apt-get install ${missing[*]}"
    local sudo=()
    ((EUID == 0)) || sudo=(sudo)
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; then
        "${sudo[@]}" apt-get update &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    fi
}

_pip_install() {  # _pip_install MODULE SPEC...: installs SPEC if MODULE at that version is missing
    local py=${PYTHON:-python3} spec want have
    for spec in "$@"; do
        want=${spec#*==}
        have=$("$py" -c "import importlib.metadata as m; print(m.version('${spec%%==*}'))" 2>/dev/null) || have=
        [[ $have == "$want" ]] && continue
        _brokers_log "pip install $spec"
        "$py" -m pip install --quiet --disable-pip-version-check "$spec" || return 1
    done
}

install_broker_deps() {
    _apt_install mosquitto mosquitto-clients tcpdump iproute2 || return 1
    _pip_install "paho-mqtt==$PAHO_MQTT_VERSION" "pika==$PIKA_VERSION"
}

install_rabbitmq_deps() {
    # Debian's package scripts may try to start the system service; that is
    # harmless here (policy-rc.d or no init), start_rabbitmq runs its own node.
    _apt_install rabbitmq-server amqp-tools
}

# --------------------------------------------------------------- mosquitto --

start_mosquitto() {
    local port=${1:?usage: start_mosquitto PORT [CONFDIR] [CONF_LINE...]}
    local confdir=${2:-}
    shift $(($# >= 2 ? 2 : 1))
    local extra=("$@") line anon=1
    if [[ -n ${MOSQUITTO_PIDS[$port]:-} ]] && _pid_alive "${MOSQUITTO_PIDS[$port]}"; then
        _brokers_log "mosquitto already running on port $port (pid ${MOSQUITTO_PIDS[$port]})"
        return 0
    fi
    if _port_listening "$port"; then
        _brokers_log "port $port is already in use by another process; pick another port"
        return 1
    fi
    if [[ -z $confdir ]]; then
        _brokers_tmpdir confdir "mosquitto-$port" || return 1
    fi
    mkdir -p "$confdir" || return 1
    local conf=$confdir/mosquitto-$port.conf log=$confdir/mosquitto-$port.log
    for line in "${extra[@]}"; do
        [[ $line == allow_anonymous* ]] && anon=0
    done
    {
        echo "# written by scripts/brokers.sh start_mosquitto"
        echo "per_listener_settings false"
        echo "listener $port 127.0.0.1"
        ((anon)) && echo "allow_anonymous true"
        echo "persistence false"
        # Run as root, mosquitto 2 drops privileges to user 'mosquitto' unless
        # told otherwise; stay as whoever we are (root in the sandbox/CI).
        echo "user $(id -un)"
        # Full log (one line per packet) to a file: mosquitto_wait_log uses it
        # to know when a client is connected or subscribed.
        echo "log_dest stderr"
        echo "log_type ${MOSQUITTO_LOG_TYPE:-all}"
        echo "connection_messages true"
        echo "log_timestamp true"
        for line in "${extra[@]}"; do echo "$line"; done
    } >"$conf"
    mosquitto -c "$conf" >"$log" 2>&1 &
    local pid=$!
    if ! wait_for_port "$port" "$BROKERS_START_TIMEOUT" "$pid"; then
        _brokers_log "mosquitto did not start on 127.0.0.1:$port; its log ($log):"
        tail -n 20 "$log" >&2
        _stop_pid "$pid" TERM 3
        return 1
    fi
    MOSQUITTO_PIDS[$port]=$pid
    MOSQUITTO_CONFDIRS[$port]=$confdir
    MOSQUITTO_LOGS[$port]=$log
    MOSQUITTO_PID=$pid
    _brokers_log "mosquitto pid $pid listening on 127.0.0.1:$port (conf $conf)"
}

stop_mosquitto() {
    local ports=("$@") port
    ((${#ports[@]})) || ports=("${!MOSQUITTO_PIDS[@]}")
    for port in "${ports[@]}"; do
        [[ -n ${MOSQUITTO_PIDS[$port]:-} ]] || continue
        _stop_pid "${MOSQUITTO_PIDS[$port]}" TERM 10
        [[ ${MOSQUITTO_PIDS[$port]} == "$MOSQUITTO_PID" ]] && MOSQUITTO_PID=
        unset "MOSQUITTO_PIDS[$port]" "MOSQUITTO_CONFDIRS[$port]" "MOSQUITTO_LOGS[$port]"
    done
    return 0
}

# Waits until the log of the mosquitto on PORT has at least COUNT (default 1)
# lines matching the extended regex PATTERN, e.g.
#   mosquitto_wait_log 1883 'Sending SUBACK to my-sub'
mosquitto_wait_log() {
    local port=${1:?usage: mosquitto_wait_log PORT PATTERN [SECS] [COUNT]} pattern=${2:?pattern}
    local secs=${3:-$BROKERS_START_TIMEOUT} count=${4:-1} log=${MOSQUITTO_LOGS[$1]:-} i n
    [[ -n $log ]] || { _brokers_log "no mosquitto started on port $port"; return 1; }
    for ((i = 0; i < secs * 20; i++)); do
        n=$(grep -cE -- "$pattern" "$log" 2>/dev/null) || n=0
        ((n >= count)) && return 0
        sleep 0.05
    done
    _brokers_log "mosquitto on $port: no '$pattern' (x$count) in its log within ${secs}s"
    return 1
}

# ---------------------------------------------------------------- rabbitmq --

# The rabbitmq-server/rabbitmqctl found first on PATH may be Debian's wrapper
# that re-executes as user 'rabbitmq' (and resets HOME); the scripts under
# /usr/lib/rabbitmq/bin run as we are, with our private environment.
_rabbitmq_bin() {
    local name=$1 d
    for d in /usr/lib/rabbitmq/bin /usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin; do
        [[ -x $d/$name ]] && { printf '%s\n' "$d/$name"; return 0; }
    done
    command -v "$name"
}

# _free_port VAR LOW HIGH: a random port in LOW..HIGH that nothing listens on.
_free_port() {
    local -n _port=$1
    local low=$2 high=$3 i p
    for ((i = 0; i < 200; i++)); do
        p=$((low + (RANDOM * 32768 + RANDOM) % (high - low + 1)))
        _port_listening "$p" || { _port=$p; return 0; }
    done
    return 1
}

# Runs "$@" with the private node's environment. Everything the node would
# otherwise share with a RabbitMQ already on the machine is its own: node name,
# distribution port, cookie (private HOME, and -setcookie for the server and
# for rabbitmqctl alike), the /etc/rabbitmq files (env, config, advanced config),
# data, logs and a crash dump. Only epmd is shared, as Erlang nodes do. The
# caller's own RABBITMQ_*/ERL_* settings (meant for their RabbitMQ) are dropped.
_rabbitmq_env() {
    local theirs=() v
    for v in $(compgen -e); do
        [[ $v == RABBITMQ_* || $v == ERL_* ]] && theirs+=(-u "$v")
    done
    env "${theirs[@]}" HOME="$RABBITMQ_DIR/home" \
        RABBITMQ_NODENAME="$RABBITMQ_NODE_NAME" \
        RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
        RABBITMQ_NODE_PORT="$RABBITMQ_PORT" \
        RABBITMQ_DIST_PORT="$RABBITMQ_DIST_PORT_IN_USE" \
        RABBITMQ_CONF_ENV_FILE="$RABBITMQ_DIR/rabbitmq-env.conf" \
        RABBITMQ_MNESIA_BASE="$RABBITMQ_DIR/mnesia" \
        RABBITMQ_LOG_BASE="$RABBITMQ_DIR/log" \
        RABBITMQ_CONFIG_FILE="$RABBITMQ_DIR/rabbitmq" \
        RABBITMQ_ADVANCED_CONFIG_FILE="$RABBITMQ_DIR/advanced.config" \
        RABBITMQ_ENABLED_PLUGINS_FILE="$RABBITMQ_DIR/enabled_plugins" \
        RABBITMQ_PID_FILE="$RABBITMQ_DIR/rabbit.pid" \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} -setcookie $_RABBITMQ_COOKIE" \
        RABBITMQ_CTL_ERL_ARGS="-setcookie $_RABBITMQ_COOKIE" \
        ERL_CRASH_DUMP="$RABBITMQ_DIR/erl_crash.dump" \
        ERL_EPMD_ADDRESS=127.0.0.1 \
        "$@"
}

_epmd_running() {
    command -v epmd >/dev/null && ERL_EPMD_ADDRESS=127.0.0.1 timeout 5 epmd -names >/dev/null 2>&1
}

start_rabbitmq() {
    RABBITMQ_PORT=${1:-${RABBITMQ_PORT:-5672}}
    if [[ -n $RABBITMQ_PID ]] && _pid_alive "$RABBITMQ_PID"; then
        _brokers_log "rabbitmq already running (pid $RABBITMQ_PID)"
        return 0
    fi
    if _port_listening "$RABBITMQ_PORT"; then
        _brokers_log "port $RABBITMQ_PORT is already in use by another process; pick another port"
        return 1
    fi
    local server
    server=$(_rabbitmq_bin rabbitmq-server) || { _brokers_log "rabbitmq-server not installed (install_rabbitmq_deps)"; return 1; }
    # A name and a distribution port of its own: a RabbitMQ already running as
    # rabbit@localhost holds that name in epmd and port 25672.
    RABBITMQ_NODE_NAME=${RABBITMQ_NODE:-pdbrokers-$$-$RABBITMQ_PORT@localhost}
    RABBITMQ_DIST_PORT_IN_USE=${RABBITMQ_DIST_PORT:-}
    if [[ -z $RABBITMQ_DIST_PORT_IN_USE ]]; then
        # Below the kernel's ephemeral ports (32768 up), so no client socket holds it.
        _free_port RABBITMQ_DIST_PORT_IN_USE 26000 28999 || { _brokers_log "no free port for Erlang distribution"; return 1; }
    elif _port_listening "$RABBITMQ_DIST_PORT_IN_USE"; then
        _brokers_log "distribution port $RABBITMQ_DIST_PORT_IN_USE (RABBITMQ_DIST_PORT) is already in use"
        return 1
    fi
    _brokers_tmpdir RABBITMQ_DIR rabbitmq || return 1
    mkdir -p "$RABBITMQ_DIR/home" "$RABBITMQ_DIR/mnesia" "$RABBITMQ_DIR/log"
    echo '[].' >"$RABBITMQ_DIR/enabled_plugins"
    : >"$RABBITMQ_DIR/rabbitmq-env.conf"
    # guest/guest is only allowed from loopback, which is where clients are.
    {
        echo "listeners.tcp.default = 127.0.0.1:$RABBITMQ_PORT"
        echo "loopback_users.guest = true"
    } >"$RABBITMQ_DIR/rabbitmq.conf"
    # A private cookie, so that only rabbitmqctl run through _rabbitmq_env talks to this node.
    _RABBITMQ_COOKIE=protodissect$RANDOM$RANDOM$RANDOM
    (umask 077 && printf '%s\n' "$_RABBITMQ_COOKIE" >"$RABBITMQ_DIR/home/.erlang.cookie")
    # epmd is shared with any other Erlang node; it is ours to stop only if we start it.
    _RABBITMQ_STARTED_EPMD=
    _epmd_running || _RABBITMQ_STARTED_EPMD=1
    _rabbitmq_env "$server" >"$RABBITMQ_DIR/server.out" 2>&1 &
    RABBITMQ_PID=$!
    local i
    for ((i = 0; i < RABBITMQ_START_TIMEOUT * 10; i++)); do
        _port_listening "$RABBITMQ_PORT" && break
        _pid_alive "$RABBITMQ_PID" || break
        sleep 0.1
    done
    if ! _port_listening "$RABBITMQ_PORT"; then
        if _pid_alive "$RABBITMQ_PID"; then
            _brokers_log "rabbitmq (node $RABBITMQ_NODE_NAME) did not listen on 127.0.0.1:$RABBITMQ_PORT within ${RABBITMQ_START_TIMEOUT}s; the end of its log:"
        else
            _brokers_log "rabbitmq (node $RABBITMQ_NODE_NAME) exited before listening on 127.0.0.1:$RABBITMQ_PORT; the end of its log:"
        fi
        tail -n 30 "$RABBITMQ_DIR/server.out" >&2
        stop_rabbitmq
        return 1
    fi
    # The Erlang VM (beam.smp) is a child of the rabbitmq-server script; it
    # owns the listening socket and is what has to be gone before its
    # directory can be removed.
    RABBITMQ_BEAM_PID=$(ss -Hltnp "sport = :$RABBITMQ_PORT" | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2)
    _brokers_log "rabbitmq node $RABBITMQ_NODE_NAME (pid $RABBITMQ_PID, distribution port $RABBITMQ_DIST_PORT_IN_USE) listening on 127.0.0.1:$RABBITMQ_PORT (dir $RABBITMQ_DIR)"
}

# Runs rabbitmqctl against the private node: rabbitmq_ctl list_queues ...
rabbitmq_ctl() {
    local ctl
    [[ -n $RABBITMQ_DIR && -n ${RABBITMQ_NODE_NAME:-} ]] || { _brokers_log "rabbitmq_ctl: no node started (start_rabbitmq)"; return 1; }
    ctl=$(_rabbitmq_bin rabbitmqctl) || return 1
    _rabbitmq_env timeout 60 "$ctl" -n "$RABBITMQ_NODE_NAME" "$@"
}

stop_rabbitmq() {
    [[ -n $RABBITMQ_PID ]] || return 0
    local beam=${RABBITMQ_BEAM_PID:-}
    if _pid_alive "$RABBITMQ_PID" || { [[ -n $beam ]] && _pid_alive "$beam"; }; then
        rabbitmq_ctl stop >/dev/null 2>&1 || true
    fi
    if [[ -n $beam ]] && ! _wait_gone "$beam" 30; then
        _stop_pid "$beam" TERM 10
    fi
    _stop_pid "$RABBITMQ_PID" TERM 20
    RABBITMQ_BEAM_PID=
    # epmd outlives the node. Stop it only if start_rabbitmq started it and no
    # other node (a RabbitMQ started meanwhile, say) is registered with it.
    if [[ -n $_RABBITMQ_STARTED_EPMD ]] && command -v epmd >/dev/null; then
        ERL_EPMD_ADDRESS=127.0.0.1 timeout 5 epmd -names 2>/dev/null | grep -q '^name ' ||
            ERL_EPMD_ADDRESS=127.0.0.1 timeout 5 epmd -kill >/dev/null 2>&1
    fi
    _RABBITMQ_STARTED_EPMD=
    RABBITMQ_PID=
}

# ----------------------------------------------------------------- capture --

start_capture() {
    local iface=${1:?usage: start_capture IFACE FILTER OUTFILE} filter=${2?filter} out=${3:?outfile} i
    if [[ -n $CAPTURE_PID ]] && _pid_alive "$CAPTURE_PID"; then
        _brokers_log "a capture is already running (pid $CAPTURE_PID); stop_capture first"
        return 1
    fi
    mkdir -p "$(dirname "$out")" || return 1
    rm -f "$out"
    CAPTURE_LOG=$(mktemp "${TMPDIR:-/tmp}/pd-brokers-tcpdump.XXXXXX") || return 1
    CAPTURE_FILE=$out
    # -Z root: Debian's tcpdump otherwise drops to user 'tcpdump' before
    # opening OUTFILE. -U: write each packet as it comes. -s 0: whole packets.
    # -B: a 32 MiB ring, so bursts of small segments are not dropped.
    # (Not --immediate-mode: its per-packet ring frames are sized for -s 0 and
    # overflow at once; stop_capture waits out the block timeout instead.)
    local user=()
    ((EUID == 0)) && user=(-Z root)
    tcpdump -i "$iface" -U -B "${CAPTURE_BUFFER_KIB:-32768}" -s 0 -n "${user[@]}" \
        -w "$out" "$filter" 2>"$CAPTURE_LOG" &
    CAPTURE_PID=$!
    for ((i = 0; i < BROKERS_START_TIMEOUT * 20; i++)); do
        if grep -q 'listening on' "$CAPTURE_LOG" 2>/dev/null; then
            return 0
        fi
        _pid_alive "$CAPTURE_PID" || break
        sleep 0.05
    done
    _brokers_log "tcpdump did not start listening on $iface:"
    cat "$CAPTURE_LOG" >&2
    _stop_pid "$CAPTURE_PID" TERM 3
    CAPTURE_PID=
    return 1
}

stop_capture() {
    [[ -n $CAPTURE_PID ]] || return 0
    # The kernel hands captured packets to tcpdump in blocks, each at the
    # latest 1 s after it was opened; packets still in a block at SIGINT are
    # lost. So wait that long after the last traffic (FIN/ACK included).
    sleep "$CAPTURE_SETTLE"
    _stop_pid "$CAPTURE_PID" INT 10
    CAPTURE_PID=
    local dropped=0
    if [[ -n $CAPTURE_LOG ]]; then
        { grep -E 'captured|dropped' "$CAPTURE_LOG" || true; } | sed "s|^|[tcpdump $(basename "$CAPTURE_FILE")] |" >&2
        dropped=$(awk '/dropped by kernel/ {print $1}' "$CAPTURE_LOG")
        rm -f "$CAPTURE_LOG"
        CAPTURE_LOG=
    fi
    if [[ ${dropped:-0} != 0 ]]; then
        _brokers_log "tcpdump lost $dropped packets: $CAPTURE_FILE is incomplete"
        return 1
    fi
    [[ -s $CAPTURE_FILE ]]
}

# ----------------------------------------------------------------- cleanup --

brokers_cleanup() {
    stop_capture 2>/dev/null || true
    stop_mosquitto || true
    stop_rabbitmq || true
    local d
    for d in "${_BROKERS_TMPDIRS[@]}"; do
        [[ -n $d && -d $d ]] && rm -rf "$d"
    done
    _BROKERS_TMPDIRS=()
    return 0
}
