NP=2
. "$(dirname "$0")/coll_matrix.inc"
