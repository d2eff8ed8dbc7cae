//! Real, well-known works the sandbox cites. Every entry is a published work with
//! its registered DOI, so a citation the sandbox inserts can be followed up.

/// A published work. Authors are written "Family, G. N." as in APA reference lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub authors: &'static [&'static str],
    pub year: u16,
    pub title: &'static str,
    pub venue: &'static str,
    pub doi: &'static str,
}

fn family(author: &str) -> &str {
    author.split(", ").next().unwrap_or(author)
}

impl Work {
    /// The first author's family name, for sorting reference lists.
    pub fn first_author(&self) -> &'static str {
        self.authors.first().map_or("", |a| family(a))
    }

    /// An APA-style parenthetical citation: "(Knuth, 1984)", "(Watson & Crick, 1953)",
    /// "(Vaswani et al., 2017)".
    pub fn in_text(&self) -> String {
        format!("({})", self.in_text_inner())
    }

    /// The citation without its parentheses, for combining several into one.
    pub(crate) fn in_text_inner(&self) -> String {
        let names = match self.authors {
            [] => "Anonymous".to_owned(),
            [a] => family(a).to_owned(),
            [a, b] => format!("{} & {}", family(a), family(b)),
            [a, ..] => format!("{} et al.", family(a)),
        };
        format!("{names}, {}", self.year)
    }

    /// An APA-style reference-list entry.
    pub fn reference(&self) -> String {
        let authors = match self.authors {
            [] => "Anonymous".to_owned(),
            [a] => (*a).to_owned(),
            [a, b] => format!("{a}, & {b}"),
            // APA 7: up to 20 authors are listed; beyond that, 19, an ellipsis, then the last.
            all if all.len() <= 20 => {
                let (last, rest) = all.split_last().unwrap_or((&"", &[]));
                format!("{}, & {last}", rest.join(", "))
            }
            all => format!("{}, … {}", all[..19].join(", "), all[all.len() - 1]),
        };
        let sep = if authors.ends_with('.') { " " } else { ". " };
        let title_end = if self.title.ends_with(['.', '?', '!']) {
            ""
        } else {
            "."
        };
        format!(
            "{authors}{sep}({}). {}{title_end} {}. https://doi.org/{}",
            self.year, self.title, self.venue, self.doi
        )
    }
}

macro_rules! work {
    ([$($a:literal),+ $(,)?], $year:literal, $title:literal, $venue:literal, $doi:literal) => {
        Work { authors: &[$($a),+], year: $year, title: $title, venue: $venue, doi: $doi }
    };
}

pub static WORKS: &[Work] = &[
    work!(
        [
            "Vaswani, A.",
            "Shazeer, N.",
            "Parmar, N.",
            "Uszkoreit, J.",
            "Jones, L.",
            "Gomez, A. N.",
            "Kaiser, Ł.",
            "Polosukhin, I."
        ],
        2017,
        "Attention is all you need",
        "Advances in Neural Information Processing Systems",
        "10.48550/arXiv.1706.03762"
    ),
    work!(
        ["LeCun, Y.", "Bengio, Y.", "Hinton, G."],
        2015,
        "Deep learning",
        "Nature",
        "10.1038/nature14539"
    ),
    work!(
        ["Shannon, C. E."],
        1948,
        "A mathematical theory of communication",
        "Bell System Technical Journal",
        "10.1002/j.1538-7305.1948.tb01338.x"
    ),
    work!(
        ["Kahneman, D.", "Tversky, A."],
        1979,
        "Prospect theory: An analysis of decision under risk",
        "Econometrica",
        "10.2307/1914185"
    ),
    work!(
        ["Watson, J. D.", "Crick, F. H. C."],
        1953,
        "Molecular structure of nucleic acids: A structure for deoxyribose nucleic acid",
        "Nature",
        "10.1038/171737a0"
    ),
    work!(
        ["He, K.", "Zhang, X.", "Ren, S.", "Sun, J."],
        2016,
        "Deep residual learning for image recognition",
        "Proceedings of the IEEE Conference on Computer Vision and Pattern Recognition",
        "10.1109/CVPR.2016.90"
    ),
    work!(
        ["Hochreiter, S.", "Schmidhuber, J."],
        1997,
        "Long short-term memory",
        "Neural Computation",
        "10.1162/neco.1997.9.8.1735"
    ),
    work!(
        ["Krizhevsky, A.", "Sutskever, I.", "Hinton, G. E."],
        2017,
        "ImageNet classification with deep convolutional neural networks",
        "Communications of the ACM",
        "10.1145/3065386"
    ),
    work!(
        ["Rumelhart, D. E.", "Hinton, G. E.", "Williams, R. J."],
        1986,
        "Learning representations by back-propagating errors",
        "Nature",
        "10.1038/323533a0"
    ),
    work!(
        ["Hinton, G. E.", "Salakhutdinov, R. R."],
        2006,
        "Reducing the dimensionality of data with neural networks",
        "Science",
        "10.1126/science.1127647"
    ),
    work!(
        ["Devlin, J.", "Chang, M.-W.", "Lee, K.", "Toutanova, K."],
        2019,
        "BERT: Pre-training of deep bidirectional transformers for language understanding",
        "Proceedings of the 2019 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies",
        "10.18653/v1/N19-1423"
    ),
    work!(
        [
            "Deng, J.",
            "Dong, W.",
            "Socher, R.",
            "Li, L.-J.",
            "Li, K.",
            "Fei-Fei, L."
        ],
        2009,
        "ImageNet: A large-scale hierarchical image database",
        "2009 IEEE Conference on Computer Vision and Pattern Recognition",
        "10.1109/CVPR.2009.5206848"
    ),
    work!(
        ["Kingma, D. P.", "Ba, J."],
        2015,
        "Adam: A method for stochastic optimization",
        "International Conference on Learning Representations",
        "10.48550/arXiv.1412.6980"
    ),
    work!(
        ["Bahdanau, D.", "Cho, K.", "Bengio, Y."],
        2015,
        "Neural machine translation by jointly learning to align and translate",
        "International Conference on Learning Representations",
        "10.48550/arXiv.1409.0473"
    ),
    work!(
        ["Mikolov, T.", "Chen, K.", "Corrado, G.", "Dean, J."],
        2013,
        "Efficient estimation of word representations in vector space",
        "arXiv",
        "10.48550/arXiv.1301.3781"
    ),
    work!(
        ["Rosenblatt, F."],
        1958,
        "The perceptron: A probabilistic model for information storage and organization in the brain",
        "Psychological Review",
        "10.1037/h0042519"
    ),
    work!(
        ["McCulloch, W. S.", "Pitts, W."],
        1943,
        "A logical calculus of the ideas immanent in nervous activity",
        "Bulletin of Mathematical Biophysics",
        "10.1007/BF02478259"
    ),
    work!(
        ["Turing, A. M."],
        1950,
        "Computing machinery and intelligence",
        "Mind",
        "10.1093/mind/LIX.236.433"
    ),
    work!(
        ["Turing, A. M."],
        1937,
        "On computable numbers, with an application to the Entscheidungsproblem",
        "Proceedings of the London Mathematical Society",
        "10.1112/plms/s2-42.1.230"
    ),
    work!(
        ["Dijkstra, E. W."],
        1959,
        "A note on two problems in connexion with graphs",
        "Numerische Mathematik",
        "10.1007/BF01386390"
    ),
    work!(
        ["Codd, E. F."],
        1970,
        "A relational model of data for large shared data banks",
        "Communications of the ACM",
        "10.1145/362384.362685"
    ),
    work!(
        ["Lamport, L."],
        1978,
        "Time, clocks, and the ordering of events in a distributed system",
        "Communications of the ACM",
        "10.1145/359545.359563"
    ),
    work!(
        ["Lamport, L.", "Shostak, R.", "Pease, M."],
        1982,
        "The Byzantine generals problem",
        "ACM Transactions on Programming Languages and Systems",
        "10.1145/357172.357176"
    ),
    work!(
        ["Fischer, M. J.", "Lynch, N. A.", "Paterson, M. S."],
        1985,
        "Impossibility of distributed consensus with one faulty process",
        "Journal of the ACM",
        "10.1145/3149.214121"
    ),
    work!(
        ["Diffie, W.", "Hellman, M. E."],
        1976,
        "New directions in cryptography",
        "IEEE Transactions on Information Theory",
        "10.1109/TIT.1976.1055638"
    ),
    work!(
        ["Rivest, R. L.", "Shamir, A.", "Adleman, L."],
        1978,
        "A method for obtaining digital signatures and public-key cryptosystems",
        "Communications of the ACM",
        "10.1145/359340.359342"
    ),
    work!(
        ["Knuth, D. E."],
        1984,
        "Literate programming",
        "The Computer Journal",
        "10.1093/comjnl/27.2.97"
    ),
    work!(
        ["Hoare, C. A. R."],
        1969,
        "An axiomatic basis for computer programming",
        "Communications of the ACM",
        "10.1145/363235.363259"
    ),
    work!(
        ["Hoare, C. A. R."],
        1978,
        "Communicating sequential processes",
        "Communications of the ACM",
        "10.1145/359576.359585"
    ),
    work!(
        ["Dean, J.", "Ghemawat, S."],
        2008,
        "MapReduce: Simplified data processing on large clusters",
        "Communications of the ACM",
        "10.1145/1327452.1327492"
    ),
    work!(
        ["Brin, S.", "Page, L."],
        1998,
        "The anatomy of a large-scale hypertextual Web search engine",
        "Computer Networks and ISDN Systems",
        "10.1016/S0169-7552(98)00110-X"
    ),
    work!(
        ["Cook, S. A."],
        1971,
        "The complexity of theorem-proving procedures",
        "Proceedings of the Third Annual ACM Symposium on Theory of Computing",
        "10.1145/800157.805047"
    ),
    work!(
        ["Thompson, K."],
        1984,
        "Reflections on trusting trust",
        "Communications of the ACM",
        "10.1145/358198.358210"
    ),
    work!(
        ["Ritchie, D. M.", "Thompson, K."],
        1974,
        "The UNIX time-sharing system",
        "Communications of the ACM",
        "10.1145/361011.361061"
    ),
    work!(
        ["Bloom, B. H."],
        1970,
        "Space/time trade-offs in hash coding with allowable errors",
        "Communications of the ACM",
        "10.1145/362686.362692"
    ),
    work!(
        ["Shor, P. W."],
        1997,
        "Polynomial-time algorithms for prime factorization and discrete logarithms on a quantum computer",
        "SIAM Journal on Computing",
        "10.1137/S0097539795293172"
    ),
    work!(
        ["Saltzer, J. H.", "Schroeder, M. D."],
        1975,
        "The protection of information in computer systems",
        "Proceedings of the IEEE",
        "10.1109/PROC.1975.9939"
    ),
    work!(
        [
            "Metropolis, N.",
            "Rosenbluth, A. W.",
            "Rosenbluth, M. N.",
            "Teller, A. H.",
            "Teller, E."
        ],
        1953,
        "Equation of state calculations by fast computing machines",
        "The Journal of Chemical Physics",
        "10.1063/1.1699114"
    ),
    work!(
        ["Kirkpatrick, S.", "Gelatt, C. D.", "Vecchi, M. P."],
        1983,
        "Optimization by simulated annealing",
        "Science",
        "10.1126/science.220.4598.671"
    ),
    work!(
        ["Cortes, C.", "Vapnik, V."],
        1995,
        "Support-vector networks",
        "Machine Learning",
        "10.1007/BF00994018"
    ),
    work!(
        ["Breiman, L."],
        2001,
        "Random forests",
        "Machine Learning",
        "10.1023/A:1010933404324"
    ),
    work!(
        ["Tibshirani, R."],
        1996,
        "Regression shrinkage and selection via the lasso",
        "Journal of the Royal Statistical Society: Series B (Methodological)",
        "10.1111/j.2517-6161.1996.tb02080.x"
    ),
    work!(
        ["Dempster, A. P.", "Laird, N. M.", "Rubin, D. B."],
        1977,
        "Maximum likelihood from incomplete data via the EM algorithm",
        "Journal of the Royal Statistical Society: Series B (Methodological)",
        "10.1111/j.2517-6161.1977.tb01600.x"
    ),
    work!(
        ["Benjamini, Y.", "Hochberg, Y."],
        1995,
        "Controlling the false discovery rate: A practical and powerful approach to multiple testing",
        "Journal of the Royal Statistical Society: Series B (Methodological)",
        "10.1111/j.2517-6161.1995.tb02031.x"
    ),
    work!(
        ["Kaplan, E. L.", "Meier, P."],
        1958,
        "Nonparametric estimation from incomplete observations",
        "Journal of the American Statistical Association",
        "10.1080/01621459.1958.10501452"
    ),
    work!(
        ["Cox, D. R."],
        1972,
        "Regression models and life-tables",
        "Journal of the Royal Statistical Society: Series B (Methodological)",
        "10.1111/j.2517-6161.1972.tb00899.x"
    ),
    work!(
        ["Akaike, H."],
        1974,
        "A new look at the statistical model identification",
        "IEEE Transactions on Automatic Control",
        "10.1109/TAC.1974.1100705"
    ),
    work!(
        ["Kalman, R. E."],
        1960,
        "A new approach to linear filtering and prediction problems",
        "Journal of Basic Engineering",
        "10.1115/1.3662552"
    ),
    work!(
        ["Student"],
        1908,
        "The probable error of a mean",
        "Biometrika",
        "10.1093/biomet/6.1.1"
    ),
    work!(
        ["Tversky, A.", "Kahneman, D."],
        1974,
        "Judgment under uncertainty: Heuristics and biases",
        "Science",
        "10.1126/science.185.4157.1124"
    ),
    work!(
        ["Simon, H. A."],
        1955,
        "A behavioral model of rational choice",
        "The Quarterly Journal of Economics",
        "10.2307/1884852"
    ),
    work!(
        ["Nash, J. F."],
        1950,
        "Equilibrium points in n-person games",
        "Proceedings of the National Academy of Sciences",
        "10.1073/pnas.36.1.48"
    ),
    work!(
        ["Akerlof, G. A."],
        1970,
        "The market for \"lemons\": Quality uncertainty and the market mechanism",
        "The Quarterly Journal of Economics",
        "10.2307/1879431"
    ),
    work!(
        ["Coase, R. H."],
        1937,
        "The nature of the firm",
        "Economica",
        "10.1111/j.1468-0335.1937.tb00002.x"
    ),
    work!(
        ["Markowitz, H."],
        1952,
        "Portfolio selection",
        "The Journal of Finance",
        "10.1111/j.1540-6261.1952.tb01525.x"
    ),
    work!(
        ["Black, F.", "Scholes, M."],
        1973,
        "The pricing of options and corporate liabilities",
        "Journal of Political Economy",
        "10.1086/260062"
    ),
    work!(
        ["Jensen, M. C.", "Meckling, W. H."],
        1976,
        "Theory of the firm: Managerial behavior, agency costs and ownership structure",
        "Journal of Financial Economics",
        "10.1016/0304-405X(76)90026-X"
    ),
    work!(
        ["Arrow, K. J."],
        1950,
        "A difficulty in the concept of social welfare",
        "Journal of Political Economy",
        "10.1086/256963"
    ),
    work!(
        ["Solow, R. M."],
        1956,
        "A contribution to the theory of economic growth",
        "The Quarterly Journal of Economics",
        "10.2307/1884513"
    ),
    work!(
        ["Hardin, G."],
        1968,
        "The tragedy of the commons",
        "Science",
        "10.1126/science.162.3859.1243"
    ),
    work!(
        ["Granovetter, M. S."],
        1973,
        "The strength of weak ties",
        "American Journal of Sociology",
        "10.1086/225469"
    ),
    work!(
        ["Putnam, R. D."],
        1995,
        "Bowling alone: America's declining social capital",
        "Journal of Democracy",
        "10.1353/jod.1995.0002"
    ),
    work!(
        ["Milgram, S."],
        1963,
        "Behavioral study of obedience",
        "The Journal of Abnormal and Social Psychology",
        "10.1037/h0040525"
    ),
    work!(
        ["Miller, G. A."],
        1956,
        "The magical number seven, plus or minus two: Some limits on our capacity for processing information",
        "Psychological Review",
        "10.1037/h0043158"
    ),
    work!(
        ["Bandura, A."],
        1977,
        "Self-efficacy: Toward a unifying theory of behavioral change",
        "Psychological Review",
        "10.1037/0033-295X.84.2.191"
    ),
    work!(
        ["Ajzen, I."],
        1991,
        "The theory of planned behavior",
        "Organizational Behavior and Human Decision Processes",
        "10.1016/0749-5978(91)90020-T"
    ),
    work!(
        ["Davis, F. D."],
        1989,
        "Perceived usefulness, perceived ease of use, and user acceptance of information technology",
        "MIS Quarterly",
        "10.2307/249008"
    ),
    work!(
        ["Baron, R. M.", "Kenny, D. A."],
        1986,
        "The moderator–mediator variable distinction in social psychological research: Conceptual, strategic, and statistical considerations",
        "Journal of Personality and Social Psychology",
        "10.1037/0022-3514.51.6.1173"
    ),
    work!(
        ["Cohen, J."],
        1960,
        "A coefficient of agreement for nominal scales",
        "Educational and Psychological Measurement",
        "10.1177/001316446002000104"
    ),
    work!(
        ["Cronbach, L. J."],
        1951,
        "Coefficient alpha and the internal structure of tests",
        "Psychometrika",
        "10.1007/BF02310555"
    ),
    work!(
        ["Laemmli, U. K."],
        1970,
        "Cleavage of structural proteins during the assembly of the head of bacteriophage T4",
        "Nature",
        "10.1038/227680a0"
    ),
    work!(
        ["Bradford, M. M."],
        1976,
        "A rapid and sensitive method for the quantitation of microgram quantities of protein utilizing the principle of protein-dye binding",
        "Analytical Biochemistry",
        "10.1016/0003-2697(76)90527-3"
    ),
    work!(
        ["Sanger, F.", "Nicklen, S.", "Coulson, A. R."],
        1977,
        "DNA sequencing with chain-terminating inhibitors",
        "Proceedings of the National Academy of Sciences",
        "10.1073/pnas.74.12.5463"
    ),
    work!(
        [
            "Altschul, S. F.",
            "Gish, W.",
            "Miller, W.",
            "Myers, E. W.",
            "Lipman, D. J."
        ],
        1990,
        "Basic local alignment search tool",
        "Journal of Molecular Biology",
        "10.1016/S0022-2836(05)80360-2"
    ),
    work!(
        [
            "Jinek, M.",
            "Chylinski, K.",
            "Fonfara, I.",
            "Hauer, M.",
            "Doudna, J. A.",
            "Charpentier, E."
        ],
        2012,
        "A programmable dual-RNA–guided DNA endonuclease in adaptive bacterial immunity",
        "Science",
        "10.1126/science.1225829"
    ),
    work!(
        ["Takahashi, K.", "Yamanaka, S."],
        2006,
        "Induction of pluripotent stem cells from mouse embryonic and adult fibroblast cultures by defined factors",
        "Cell",
        "10.1016/j.cell.2006.07.024"
    ),
    work!(
        ["Hanahan, D.", "Weinberg, R. A."],
        2000,
        "The hallmarks of cancer",
        "Cell",
        "10.1016/S0092-8674(00)81683-9"
    ),
    work!(
        ["Hanahan, D.", "Weinberg, R. A."],
        2011,
        "Hallmarks of cancer: The next generation",
        "Cell",
        "10.1016/j.cell.2011.02.013"
    ),
    work!(
        ["Hodgkin, A. L.", "Huxley, A. F."],
        1952,
        "A quantitative description of membrane current and its application to conduction and excitation in nerve",
        "The Journal of Physiology",
        "10.1113/jphysiol.1952.sp004764"
    ),
    work!(
        ["Hubel, D. H.", "Wiesel, T. N."],
        1962,
        "Receptive fields, binocular interaction and functional architecture in the cat's visual cortex",
        "The Journal of Physiology",
        "10.1113/jphysiol.1962.sp006837"
    ),
    work!(
        ["Einstein, A."],
        1905,
        "Zur Elektrodynamik bewegter Körper",
        "Annalen der Physik",
        "10.1002/andp.19053221004"
    ),
    work!(
        ["Einstein, A.", "Podolsky, B.", "Rosen, N."],
        1935,
        "Can quantum-mechanical description of physical reality be considered complete?",
        "Physical Review",
        "10.1103/PhysRev.47.777"
    ),
    work!(
        ["Bell, J. S."],
        1964,
        "On the Einstein Podolsky Rosen paradox",
        "Physics Physique Fizika",
        "10.1103/PhysicsPhysiqueFizika.1.195"
    ),
    work!(
        ["Higgs, P. W."],
        1964,
        "Broken symmetries and the masses of gauge bosons",
        "Physical Review Letters",
        "10.1103/PhysRevLett.13.508"
    ),
    work!(
        ["Hohenberg, P.", "Kohn, W."],
        1964,
        "Inhomogeneous electron gas",
        "Physical Review",
        "10.1103/PhysRev.136.B864"
    ),
    work!(
        ["Kohn, W.", "Sham, L. J."],
        1965,
        "Self-consistent equations including exchange and correlation effects",
        "Physical Review",
        "10.1103/PhysRev.140.A1133"
    ),
    work!(
        ["Perdew, J. P.", "Burke, K.", "Ernzerhof, M."],
        1996,
        "Generalized gradient approximation made simple",
        "Physical Review Letters",
        "10.1103/PhysRevLett.77.3865"
    ),
    work!(
        [
            "Novoselov, K. S.",
            "Geim, A. K.",
            "Morozov, S. V.",
            "Jiang, D.",
            "Zhang, Y.",
            "Dubonos, S. V.",
            "Grigorieva, I. V.",
            "Firsov, A. A."
        ],
        2004,
        "Electric field effect in atomically thin carbon films",
        "Science",
        "10.1126/science.1102896"
    ),
    work!(
        ["Lorenz, E. N."],
        1963,
        "Deterministic nonperiodic flow",
        "Journal of the Atmospheric Sciences",
        "10.1175/1520-0469(1963)020<0130:DNF>2.0.CO;2"
    ),
    work!(
        ["Watts, D. J.", "Strogatz, S. H."],
        1998,
        "Collective dynamics of 'small-world' networks",
        "Nature",
        "10.1038/30918"
    ),
    work!(
        ["Barabási, A.-L.", "Albert, R."],
        1999,
        "Emergence of scaling in random networks",
        "Science",
        "10.1126/science.286.5439.509"
    ),
];
