NP=4
. "$(dirname "$0")/coll_matrix.inc"
