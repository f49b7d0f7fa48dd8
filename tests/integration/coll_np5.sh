NP=5
. "$(dirname "$0")/coll_matrix.inc"
