// Series colours: distinguishable on white and for the common colour-vision deficiencies
// (Okabe–Ito, then Tableau 10 for more series).
export const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#F0E442', '#4E79A7', '#F28E2B', '#59A14F', '#E15759', '#B07AA1', '#76B7B2', '#9C755F', '#BAB0AC'];
