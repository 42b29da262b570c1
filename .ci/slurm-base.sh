# The directory of the CI's SLURM cluster: what .ci/slurm-up.sh makes and .ci/slurm-down.sh trusts (sourced).
MARK=.fgx-slurm  # slurm-up.sh's mark in every directory it made

# check_base DIR: succeed if DIR is a directory that slurm-up.sh made and only its owner, the user running
# this (root), may change: not a link, owned by this user, writable by no one else, holding the mark.
# Anything else may be another user's, whose slurm.conf root would write and whose PID files it would kill.
check_base() {
  local dir=$1 owner mode
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    echo "slurm: $dir is not a directory (or is a link); give BASE a new path, or none for a fresh one" >&2
    return 1
  fi
  owner=$(stat -c %u "$dir") mode=$(stat -c %a "$dir")
  if [ "$owner" != "$EUID" ] || [ $(( 8#$mode & 8#022 )) != 0 ] || [ ! -f "$dir/$MARK" ] || [ -L "$dir/$MARK" ]; then
    echo "slurm: $dir was not made by .ci/slurm-up.sh for uid $EUID (owner uid $owner, mode $mode," \
         "mark $MARK $([ -f "$dir/$MARK" ] && echo present || echo missing)); refusing to use it." \
         "Give BASE a new path, or none for a fresh one" >&2
    return 1
  fi
}
