NP=3
. "$(dirname "$0")/coll_matrix.inc"
