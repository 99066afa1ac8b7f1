package repository

// decodeRows turns stored rows into model values with each row's decoder,
// stopping at the first that does not decode.
func decodeRows[R, M any](rows []R, decode func(*R) (M, error)) ([]M, error) {
	out := make([]M, 0, len(rows))
	for i := range rows {
		m, err := decode(&rows[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
